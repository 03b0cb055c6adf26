//! The CodeMode service end to end: execute through the VM and the host
//! bridge (binding, authorization, handlers, failures, deadlines,
//! cancellation, concurrency), the exact error texts, and progress reports.

use codemode_catalog::{
    AuthorizationRequest, CallDone, CancellationToken, Capability, Catalog, CodeMode, Config, Data,
    Decision, ExecuteOptions, HandlerError, Limits, Manifest, NoInput, PolicyError, PolicyFn,
    Progress, ProgressFuture, Rule, Subject,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Deserialize, JsonSchema)]
struct LookupIn {
    key: String,
    limit: Option<i64>,
}

#[derive(Serialize, JsonSchema)]
struct LookupOut {
    keys: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
struct EchoIn {
    value: String,
}

#[derive(Serialize, JsonSchema)]
struct EchoOut {
    value: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddIn {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct SumOut {
    sum: i64,
}

#[derive(Deserialize, JsonSchema)]
struct PresentIn {
    s: Option<String>,
    i: Option<i64>,
    b: Option<bool>,
    f: Option<f64>,
}

#[derive(Serialize, JsonSchema)]
struct Names {
    names: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
struct FailIn {
    public: bool,
}

#[derive(Serialize, JsonSchema)]
struct Empty {}

#[derive(Serialize, JsonSchema)]
struct FloatOut {
    value: f64,
}

#[derive(Serialize, JsonSchema)]
struct UnsignedOut {
    value: u64,
}

#[derive(Deserialize, JsonSchema)]
struct SleepIn {
    ms: i64,
}

#[derive(Serialize, JsonSchema)]
struct Slept {
    slept: i64,
}

fn catalog() -> Catalog {
    let manifest = Manifest::from_json(
        r#"{"capabilities":[{"id":"remote.get","name":"remote.get","summary":"Get a remote thing.",
            "input_schema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}]}"#,
    )
    .unwrap();
    Catalog::builder()
        .capability(
            Capability::new("records.lookup", |i: LookupIn| async move {
                let keys = ["alpha", "alpine", "beta"]
                    .iter()
                    .filter(|k| k.starts_with(&i.key))
                    .take(i.limit.unwrap_or(10) as usize)
                    .map(|k| k.to_string())
                    .collect();
                Ok(LookupOut { keys })
            })
            .id("records.entry.lookup")
            .summary("Look up one record by key.")
            .rule("limit", Rule::range(1, 100)),
        )
        .capability(
            Capability::new("conformance.echo", |i: EchoIn| async move {
                Ok(EchoOut { value: i.value })
            })
            .summary("Echo a value."),
        )
        .capability(
            Capability::new("conformance.add", |i: AddIn| async move {
                let sum =
                    i.a.checked_add(i.b)
                        .ok_or(HandlerError::internal("overflow"))?;
                Ok(SumOut { sum })
            })
            .summary("Add two integers."),
        )
        .capability(
            Capability::new("conformance.present", |i: PresentIn| async move {
                let mut names = Vec::new();
                for (n, p) in [
                    ("b", i.b.is_some()),
                    ("f", i.f.is_some()),
                    ("i", i.i.is_some()),
                    ("s", i.s.is_some()),
                ] {
                    if p {
                        names.push(n.to_string());
                    }
                }
                Ok(Names { names })
            })
            .summary("Names of present arguments."),
        )
        .capability(
            Capability::new("conformance.fail", |i: FailIn| async move {
                if i.public {
                    Err::<Empty, _>(HandlerError::public("conformance failure"))
                } else {
                    Err(HandlerError::internal("SECRET-HANDLER-DETAIL"))
                }
            })
            .summary("Always fails."),
        )
        .capability(
            Capability::new("conformance.panic", |_: NoInput| async move {
                if true {
                    panic!("SECRET-PANIC");
                }
                Ok(Empty {})
            })
            .summary("Panics."),
        )
        .capability(
            Capability::new("conformance.nan", |_: NoInput| async {
                Ok(FloatOut { value: f64::NAN })
            })
            .summary("Returns NaN."),
        )
        .capability(
            Capability::new("conformance.huge_unsigned", |_: NoInput| async {
                Ok(UnsignedOut { value: u64::MAX })
            })
            .summary("Returns a huge unsigned."),
        )
        .capability(
            Capability::new("conformance.sleep", |i: SleepIn| async move {
                tokio::time::sleep(Duration::from_millis(i.ms as u64)).await;
                Ok(Slept { slept: i.ms })
            })
            .summary("Sleeps.")
            .rule("ms", Rule::range(0, 60_000)),
        )
        .capability(
            Capability::new("conformance.unit", |_: ()| async {
                Ok(Names { names: vec![] })
            })
            .summary("Takes a unit input."),
        )
        .capability(
            Capability::new("conformance.denied", |_: NoInput| async { Ok(Empty {}) })
                .summary("Denied by policy."),
        )
        .capability(
            Capability::new("conformance.policy_error", |_: NoInput| async {
                Ok(Empty {})
            })
            .summary("Policy fails."),
        )
        .capability(
            Capability::new("conformance.hidden", |_: NoInput| async { Ok(Empty {}) })
                .id("conformance.hidden.id")
                .summary("Hidden."),
        )
        .disable("conformance.hidden.id")
        .manifest(manifest)
        .capability(
            Capability::from_schemas(
                "remote.echo",
                serde_json::json!({"type": "object", "properties": {"v": {"type": "integer"}}}),
                None,
            )
            .summary("Echo through JSON.")
            .json_handler(|args| async move {
                match args.get("v").and_then(|v| v.as_i64()) {
                    Some(1) => Ok(serde_json::json!([1])),
                    Some(2) => Ok(serde_json::json!({"big": u64::MAX})),
                    _ => Ok(serde_json::json!({"args": args})),
                }
            }),
        )
        .build()
        .unwrap()
}

fn policy(req: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError> {
    match req.capability_id.as_str() {
        "conformance.denied" => Ok(Decision::Deny),
        "conformance.policy_error" => Err(PolicyError("SECRET-POLICY".into())),
        _ => Ok(Decision::Allow),
    }
}

fn service_with(config: Config) -> CodeMode {
    CodeMode::with_config(catalog(), Arc::new(PolicyFn(policy)), config)
}

fn service() -> CodeMode {
    service_with(Config::default())
}

fn me() -> Subject {
    Subject::new("tester")
}

async fn run(cm: &CodeMode, body: &str) -> Result<String, String> {
    let source = format!("def main():\n    return {body}\n");
    cm.execute(&me(), &source, ExecuteOptions::default())
        .await
        .map(|d| d.to_json_string())
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_compose_capability_calls() {
    let cm = service();
    let source = r#"
def main():
    r = records.lookup(key="al", limit=None)
    s = conformance.add(a=2, b=3)
    return {"keys": r["keys"], "sum": s["sum"], "echo": conformance.echo(value="x")["value"]}
"#;
    let got = cm
        .execute(&me(), source, ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(
        got.to_json_string(),
        r#"{"keys":["alpha","alpine"],"sum":5,"echo":"x"}"#
    );
    assert_eq!(
        run(&cm, r#"records.lookup(key="al", limit=1)"#).await,
        Ok(r#"{"keys":["alpha"]}"#.into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn omitted_and_none_arguments_are_absent() {
    let cm = service();
    assert_eq!(
        run(&cm, r#"conformance.present(s=None, i=1, f=2)"#).await,
        Ok(r#"{"names":["f","i"]}"#.into())
    );
    assert_eq!(
        run(&cm, "conformance.present()").await,
        Ok(r#"{"names":[]}"#.into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_have_their_exact_texts() {
    let cm = service();
    let cases = [
        (
            r#"records.lookup(key=1)"#,
            "invalid capability arguments: key: want str, got int",
        ),
        (
            r#"records.lookup(key="a", limit="2")"#,
            "invalid capability arguments: limit: want int, got str",
        ),
        (
            r#"records.lookup(key="a", limit=0)"#,
            "invalid capability arguments: limit: must be at least 1",
        ),
        (
            r#"records.lookup()"#,
            "invalid capability arguments: key: missing required argument",
        ),
        (
            r#"records.lookup(key="a", nope=1)"#,
            "invalid capability arguments: nope: unknown argument",
        ),
        (r#"conformance.denied()"#, "permission denied"),
        (
            r#"conformance.policy_error()"#,
            "authorization policy failure",
        ),
        (
            r#"conformance.fail(public=True)"#,
            "capability failed: conformance failure",
        ),
        (r#"conformance.fail(public=False)"#, "capability failed"),
        (r#"conformance.nan()"#, "capability failed"),
        (r#"conformance.huge_unsigned()"#, "capability failed"),
        (
            r#"conformance.add(a=9223372036854775807, b=1)"#,
            "capability failed",
        ),
        (r#"remote.get(id="x")"#, "capability failed"),
        (r#"remote.echo(v=1)"#, "capability failed"),
        (r#"remote.echo(v=2)"#, "capability failed"),
        (r#"conformance.panic()"#, "capability failed"),
    ];
    for (call, want) in cases {
        assert_eq!(run(&cm, call).await, Err(want.to_string()), "{call}");
    }
    assert_eq!(
        run(&cm, "remote.echo(v=None)").await,
        Ok(r#"{"args":{}}"#.into())
    );
    assert_eq!(
        run(&cm, "remote.echo(v=3)").await,
        Ok(r#"{"args":{"v":3}}"#.into())
    );
    // The server keeps serving after a panic.
    assert_eq!(
        run(&cm, r#"conformance.echo(value="ok")"#).await,
        Ok(r#"{"value":"ok"}"#.into())
    );
    let positional = run(&cm, r#"conformance.echo("x")"#).await.unwrap_err();
    assert!(
        positional.starts_with("invalid capability arguments"),
        "{positional}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_capability_reads_like_a_missing_one() {
    let cm = service();
    let hidden = run(&cm, "conformance.hidden()").await.unwrap_err();
    let never = run(&cm, "conformance.nevers()").await.unwrap_err();
    assert!(hidden.starts_with("invalid program: "), "{hidden}");
    assert_eq!(hidden.replace("hidden", "X"), never.replace("nevers", "X"));
    assert_eq!(
        cm.describe(&me(), "conformance.hidden")
            .await
            .unwrap_err()
            .to_string(),
        "capability not found"
    );
    assert!(cm.search(&me(), "hidden").await.unwrap().results.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_subject_is_unauthenticated_everywhere() {
    let cm = service();
    let nobody = Subject::new("");
    let e = |r: Result<(), codemode_catalog::Error>| r.unwrap_err().to_string();
    assert_eq!(
        e(cm.search(&nobody, "echo").await.map(drop)),
        "unauthenticated"
    );
    assert_eq!(
        e(cm.describe(&nobody, "conformance.echo").await.map(drop)),
        "unauthenticated"
    );
    assert_eq!(
        e(cm.execute(
            &nobody,
            "def main():\n    return 1\n",
            ExecuteOptions::default()
        )
        .await
        .map(drop)),
        "unauthenticated"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_and_describe_through_the_service() {
    let cm = service();
    let r = cm.search(&me(), "records.lookup").await.unwrap();
    assert_eq!(
        r.results[0].signature,
        "records.lookup(*, key: str, limit: int | None)"
    );
    let long = "x".repeat(257);
    assert_eq!(
        cm.search(&me(), &long).await.unwrap_err().to_string(),
        "resource limit exceeded"
    );
    let d = cm.describe(&me(), "conformance.sleep").await.unwrap();
    assert_eq!(d.signature, "conformance.sleep(*, ms: int)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_handler_is_stopped_at_the_deadline() {
    let mut config = Config::default();
    config.limits.max_time = Duration::from_millis(300);
    let cm = service_with(config);
    // The outcome on every attempt, the time on the best of up to three: a
    // handler that ran its 10 s would fail all three.
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        assert_eq!(
            run(&cm, "conformance.sleep(ms=10000)").await,
            Err("resource limit exceeded".into())
        );
        best = best.min(start.elapsed());
        if best < Duration::from_secs(2) {
            break;
        }
    }
    assert!(best < Duration::from_secs(2), "{best:?}");
    let spin = cm
        .execute(
            &me(),
            "def main():\n    x = 0\n    for i in range(100000000):\n        x += i\n    return x\n",
            ExecuteOptions::default(),
        )
        .await;
    assert_eq!(spin.unwrap_err().to_string(), "resource limit exceeded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_stops_handlers_and_programs() {
    let mut config = Config::default();
    config.limits.max_steps = u64::MAX;
    let cm = service_with(config);
    for source in [
        "def main():\n    return conformance.sleep(ms=10000)\n",
        "def main():\n    x = 0\n    for i in range(1000000000):\n        x += i\n    return x\n",
    ] {
        // The outcome on every attempt, the time on the best of up to
        // three: a program that ran on would fail all three.
        let mut best = Duration::MAX;
        for _ in 0..3 {
            let token = CancellationToken::new();
            let t2 = token.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                t2.cancel();
            });
            let start = Instant::now();
            let got = cm
                .execute(&me(), source, ExecuteOptions::cancelled_by(token))
                .await;
            assert_eq!(got.unwrap_err().to_string(), "context canceled");
            best = best.min(start.elapsed());
            if best < Duration::from_secs(3) {
                break;
            }
        }
        assert!(best < Duration::from_secs(3), "{best:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_program_leaves_the_runtime_serving() {
    // A spinning program holds one worker (it may keep the worker's core);
    // programs on other tasks, with handlers that wait on the runtime's
    // timers, still run to completion meanwhile.
    let mut config = Config::default();
    config.limits.max_steps = u64::MAX;
    config.limits.max_time = Duration::from_secs(60);
    let cm = service_with(config);
    let token = CancellationToken::new();
    let spin = {
        let (cm, token) = (cm.clone(), token.clone());
        tokio::spawn(async move {
            let source = "def main():\n    x = 0\n    for i in range(1000000000):\n        x += i\n    return x\n";
            cm.execute(&me(), source, ExecuteOptions::cancelled_by(token))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    let others: Vec<_> = (0..3)
        .map(|_| {
            let cm = cm.clone();
            tokio::spawn(async move { run(&cm, "conformance.sleep(ms=20)").await })
        })
        .collect();
    for other in others {
        assert_eq!(other.await.expect("joined"), Ok(r#"{"slept":20}"#.into()));
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(!spin.is_finished());
    token.cancel();
    let stopped = spin.await.expect("joined");
    assert_eq!(stopped.unwrap_err().to_string(), "context canceled");
}

#[test]
fn dropping_an_execution_stops_its_program_on_the_blocking_pool() {
    // A current-thread runtime runs programs on its blocking pool, and
    // dropping the runtime waits for them: it returns at once only if the
    // dropped execution stopped its program (which would otherwise run
    // to the 60 s deadline).
    let mut config = Config::default();
    config.limits.max_steps = u64::MAX;
    config.limits.max_time = Duration::from_secs(60);
    let cm = service_with(config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let start = Instant::now();
    let spin =
        "def main():\n    x = 0\n    for i in range(1000000000):\n        x += i\n    return x\n";
    let timed_out = runtime.block_on(async {
        let subject = me();
        let execution = cm.execute(&subject, spin, ExecuteOptions::default());
        tokio::time::timeout(Duration::from_millis(100), execution)
            .await
            .is_err()
    });
    assert!(timed_out);
    drop(runtime);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_paused_execution_holds_no_cpu_slot() {
    // One CPU slot, and two executions that each wait 300 ms for a
    // capability: they wait side by side.
    let config = Config {
        max_concurrent_executions: 1,
        ..Config::default()
    };
    let cm = service_with(config);
    let start = Instant::now();
    let (a, b) = tokio::join!(
        run(&cm, "conformance.sleep(ms=300)"),
        run(&cm, "conformance.sleep(ms=300)")
    );
    assert_eq!(a, Ok(r#"{"slept":300}"#.into()));
    assert_eq!(b, Ok(r#"{"slept":300}"#.into()));
    assert!(
        start.elapsed() < Duration::from_millis(550),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(cm.execution_counts(), Default::default());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn executions_beyond_the_open_limit_wait_for_a_slot() {
    let config = Config {
        max_open_executions: 1,
        ..Config::default()
    };
    let cm = service_with(config);
    let start = Instant::now();
    let (a, b) = tokio::join!(
        run(&cm, "conformance.sleep(ms=150)"),
        run(&cm, "conformance.sleep(ms=150)")
    );
    assert_eq!(a, Ok(r#"{"slept":150}"#.into()));
    assert_eq!(b, Ok(r#"{"slept":150}"#.into()));
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "{:?}",
        start.elapsed()
    );
}

/// Runs `body` as `who` on a task of its own.
fn spawn_as(
    cm: &CodeMode,
    who: &'static str,
    body: &str,
) -> tokio::task::JoinHandle<Result<String, String>> {
    let (cm, source) = (cm.clone(), format!("def main():\n    return {body}\n"));
    tokio::spawn(async move {
        cm.execute(&Subject::new(who), &source, ExecuteOptions::default())
            .await
            .map(|d| d.to_json_string())
            .map_err(|e| e.to_string())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waiting_for_a_slot_is_bounded() {
    let config = Config {
        max_open_executions: 1,
        max_queued_executions: 1,
        max_queue_wait: Duration::from_millis(200),
        ..Config::default()
    };
    let cm = service_with(config);
    let sleeper = spawn_as(&cm, "a", "conformance.sleep(ms=1500)");
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Too long a source is refused at once, not after waiting.
    let start = Instant::now();
    let long = format!("def main():\n    return 1\n#{}\n", "x".repeat(70_000));
    let refused = cm
        .execute(&Subject::new("b"), &long, ExecuteOptions::default())
        .await;
    assert_eq!(
        refused.map_err(|e| e.to_string()),
        Err("resource limit exceeded".into())
    );
    assert!(
        start.elapsed() < Duration::from_millis(100),
        "{:?}",
        start.elapsed()
    );
    // One waits, up to its bound; a second finds the queue full at once.
    let start = Instant::now();
    let waiter = spawn_as(&cm, "b", "1");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let full = run(&cm, "1").await;
    assert_eq!(full, Err("resource limit exceeded".into()));
    assert!(
        start.elapsed() < Duration::from_millis(150),
        "{:?}",
        start.elapsed()
    );
    let waited = waiter.await.expect("joined");
    assert_eq!(waited, Err("resource limit exceeded".into()));
    assert!(
        start.elapsed() >= Duration::from_millis(200),
        "{:?}",
        start.elapsed()
    );
    assert!(
        start.elapsed() < Duration::from_millis(1000),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        sleeper.await.expect("joined"),
        Ok(r#"{"slept":1500}"#.into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_subject_cannot_take_every_slot() {
    let config = Config {
        max_open_executions: 4,
        max_executions_per_subject: 2,
        max_queue_wait: Duration::from_millis(100),
        ..Config::default()
    };
    let cm = service_with(config);
    let sleepers: Vec<_> = (0..2)
        .map(|_| spawn_as(&cm, "greedy", "conformance.sleep(ms=1000)"))
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Its third waits for its own slots and gives up; others run at once.
    let third = spawn_as(&cm, "greedy", "1");
    let start = Instant::now();
    assert_eq!(
        spawn_as(&cm, "other", "2").await.expect("joined"),
        Ok("2".into())
    );
    assert!(
        start.elapsed() < Duration::from_millis(100),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        third.await.expect("joined"),
        Err("resource limit exceeded".into())
    );
    for s in sleepers {
        assert_eq!(s.await.expect("joined"), Ok(r#"{"slept":1000}"#.into()));
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_current_thread_runtime_serves_handlers_too() {
    let cm = service();
    assert_eq!(
        run(&cm, "conformance.sleep(ms=5)").await,
        Ok(r#"{"slept":5}"#.into())
    );
}

#[test]
fn data_is_reexported() {
    assert_eq!(Data::Int(1).to_json_string(), "1");
}

/// What an observer heard: (calls completed, capability name).
type Heard = Arc<Mutex<Vec<(u64, String)>>>;

/// Records what a progress observer hears; its future waits `wait` first.
fn observer(wait: Duration) -> (Arc<dyn Progress>, Heard) {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let log = heard.clone();
    let progress = move |done: CallDone<'_>| -> ProgressFuture {
        let log = log.clone();
        let entry = (done.calls, done.name.to_string());
        Box::pin(async move {
            tokio::time::sleep(wait).await;
            log.lock().expect("lock").push(entry);
        })
    };
    (Arc::new(progress), heard)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_hears_each_completed_call_in_order() {
    let cm = service();
    let source = "def main():\n    a = conformance.add(a=1, b=2)\n    \
                  e = conformance.echo(value=\"x\")\n    conformance.add(a=1, b=\"no\")\n";
    // Each report runs to its end (here after a wait) before the program
    // goes on; a call that fails binding is not reported.
    let (progress, heard) = observer(Duration::from_millis(20));
    let outcome = cm
        .execute(
            &me(),
            source,
            ExecuteOptions::default().progress(Some(progress)),
        )
        .await;
    assert_eq!(
        outcome.map_err(|e| e.to_string()),
        Err("invalid capability arguments: b: want int, got str".into())
    );
    assert_eq!(
        *heard.lock().expect("lock"),
        vec![
            (1, "conformance.add".to_string()),
            (2, "conformance.echo".to_string())
        ]
    );
    // On a current-thread runtime too (the program runs on the blocking
    // pool).
    let (progress, heard) = observer(Duration::from_millis(1));
    let outcome = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let source = "def main():\n    return conformance.add(a=1, b=2)\n";
            cm.execute(
                &me(),
                source,
                ExecuteOptions::default().progress(Some(progress)),
            )
            .await
            .map(|d| d.to_json_string())
        })
    })
    .await
    .expect("joined");
    assert_eq!(outcome, Ok("{\"sum\":3}".to_string()));
    assert_eq!(
        *heard.lock().expect("lock"),
        vec![(1, "conformance.add".to_string())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_progress_report_ends_at_the_deadline() {
    let cm = service_with(Config {
        limits: Limits {
            max_time: Duration::from_millis(100),
            ..Limits::default()
        },
        ..Config::default()
    });
    let (progress, heard) = observer(Duration::from_secs(60));
    let started = Instant::now();
    let outcome = cm
        .execute(
            &me(),
            "def main():\n    return conformance.add(a=1, b=2)\n",
            ExecuteOptions::default().progress(Some(progress)),
        )
        .await;
    assert_eq!(
        outcome.map_err(|e| e.to_string()),
        Err("resource limit exceeded".into())
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(heard.lock().expect("lock").is_empty());
}

/// A program that builds 2.5 MB of strings and keeps them all (it makes
/// no garbage, so what a collection finds is what it built), then waits
/// on a sleep.
const HOLDS_AND_WAITS: &str = "def main():\n    big = [\"x\" * 2500 for i in range(1000)]\n    return conformance.sleep(ms=2000)\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_paused_execution_gives_its_memory_back_at_once() {
    let cm = service();
    let token = CancellationToken::new();
    let paused = {
        let (cm, token) = (cm.clone(), token.clone());
        tokio::spawn(async move {
            cm.execute(&me(), HOLDS_AND_WAITS, ExecuteOptions::cancelled_by(token))
                .await
        })
    };
    while cm.execution_counts().paused == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let counts = cm.execution_counts();
    assert_eq!((counts.open, counts.running, counts.paused), (1, 0, 1));
    assert!(counts.heap_bytes > 2_000_000, "{counts:?}");
    let cancelled = Instant::now();
    token.cancel();
    let outcome = paused.await.expect("joined");
    assert_eq!(outcome.unwrap_err().to_string(), "context canceled");
    assert!(cancelled.elapsed() < Duration::from_millis(500));
    assert_eq!(cm.execution_counts(), Default::default());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_executions_share_one_heap_bound() {
    // Room for one such program at a time: the second fails while the
    // first waits; after the first ends, the bound is free again.
    let config = Config {
        max_open_heap_bytes: 3 << 20,
        ..Config::default()
    };
    let cm = service_with(config);
    let first = {
        let cm = cm.clone();
        tokio::spawn(async move {
            cm.execute(&me(), HOLDS_AND_WAITS, ExecuteOptions::default())
                .await
                .map(|d| d.to_json_string())
        })
    };
    while cm.execution_counts().paused == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let second = cm
        .execute(&me(), HOLDS_AND_WAITS, ExecuteOptions::default())
        .await;
    assert_eq!(second.unwrap_err().to_string(), "resource limit exceeded");
    assert_eq!(
        first.await.expect("joined"),
        Ok(r#"{"slept":2000}"#.to_string())
    );
    assert_eq!(cm.execution_counts().heap_bytes, 0);
    let small = run(&cm, "1 + 1").await;
    assert_eq!(small, Ok("2".into()));
}
