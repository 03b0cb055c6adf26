//! Steps that cannot run on a runtime worker go to the service's step
//! threads: never more of them than the service has CPU slots, however
//! many executions are open, and none left once the service is dropped.
//! (A file of its own: the count is of the whole process's threads.)

use codemode_catalog::{
    Capability, Catalog, CodeMode, Config, ExecuteOptions, PolicyFn, Rule, Subject,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Deserialize, JsonSchema)]
struct SleepIn {
    ms: i64,
}

#[derive(Serialize, JsonSchema)]
struct Slept {
    slept: i64,
}

fn service(slots: usize) -> CodeMode {
    let catalog = Catalog::builder()
        .capability(
            Capability::new("t.sleep", |i: SleepIn| async move {
                tokio::time::sleep(Duration::from_millis(i.ms as u64)).await;
                Ok(Slept { slept: i.ms })
            })
            .summary("Sleeps.")
            .rule("ms", Rule::range(0, 60_000)),
        )
        .build()
        .unwrap();
    let config = Config {
        max_concurrent_executions: slots,
        ..Config::default()
    };
    CodeMode::with_config(
        catalog,
        Arc::new(PolicyFn(|_: &codemode_catalog::AuthorizationRequest| {
            Ok(codemode_catalog::Decision::Allow)
        })),
        config,
    )
}

/// The step threads of the process now.
fn step_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim_end() == "codemode-step")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_threads_never_outnumber_the_slots() {
    let cm = service(3);
    // Each program computes between its waits, so that steps overlap and
    // most cannot run on a worker.
    let source = r#"
def main():
    total = 0
    for round in range(3):
        for i in range(20000):
            total += i % 7
        total += t.sleep(ms=5)["slept"]
    return total
"#;
    let expected = 3 * (0..20000).map(|i| i % 7).sum::<i64>() + 15;
    let mut most = 0;
    let tasks: Vec<_> = (0..60)
        .map(|_| {
            let cm = cm.clone();
            tokio::spawn(async move {
                cm.execute(&Subject::new("s"), source, ExecuteOptions::default())
                    .await
                    .map(|d| d.to_json_string())
                    .map_err(|e| e.to_string())
            })
        })
        .collect();
    let watch = tokio::spawn(async {
        let mut most = 0;
        for _ in 0..100 {
            most = most.max(step_threads());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        most
    });
    for task in tasks {
        assert_eq!(task.await.unwrap(), Ok(expected.to_string()));
    }
    most = most.max(watch.await.unwrap()).max(step_threads());
    assert!(most >= 1, "no step went to a step thread");
    assert!(most <= 3, "{most} step threads for 3 slots");
    drop(cm);
    let start = Instant::now();
    while step_threads() > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "step threads outlived their service"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
