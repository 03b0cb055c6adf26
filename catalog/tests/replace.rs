//! Replacing the catalog of a running service (what an upstream server's
//! tool list change does): search, describe and new executions see the new
//! catalog at once, while an execution already running keeps the catalog
//! it started with to its end — its names and its handlers.

use codemode_catalog::{AllowAll, Capability, Catalog, CodeMode, ExecuteOptions, Subject};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Notify;

fn schema() -> serde_json::Value {
    json!({"type": "object", "properties": {}})
}

fn out_schema() -> serde_json::Value {
    json!({"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]})
}

/// `t.gate()` signals `entered` and waits for `open`; `t.<name>()` returns
/// `{v: tag}`.
fn catalog(names: &[&str], tag: &'static str, entered: Arc<Notify>, open: Arc<Notify>) -> Catalog {
    let gate = Capability::from_schemas("t.gate", schema(), Some(out_schema()))
        .summary("Wait for the gate.")
        .json_handler(move |_| {
            let (entered, open) = (entered.clone(), open.clone());
            async move {
                entered.notify_one();
                open.notified().await;
                Ok(json!({"v": "gate"}))
            }
        });
    let mut builder = Catalog::builder().capability(gate);
    for name in names {
        builder = builder.capability(
            Capability::from_schemas(format!("t.{name}"), schema(), Some(out_schema()))
                .summary(format!("The {name} capability."))
                .json_handler(move |_| async move { Ok(json!({"v": tag})) }),
        );
    }
    builder.build().expect("a valid catalog")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_executions_keep_their_catalog() {
    let (entered, open) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let service = CodeMode::new(
        catalog(&["old"], "first", entered.clone(), open.clone()),
        AllowAll,
    );
    let me = Subject::new("local");
    let running = {
        let (service, me) = (service.clone(), me.clone());
        tokio::spawn(async move {
            let source = "def main():\n    t.gate()\n    return t.old()\n";
            service
                .execute(&me, source, ExecuteOptions::default())
                .await
        })
    };
    entered.notified().await;
    service.replace_catalog(catalog(&["new"], "second", entered.clone(), open.clone()));
    // Everything new sees the new catalog.
    assert!(service.describe(&me, "t.old").await.is_err());
    assert_eq!(
        service.describe(&me, "t.new").await.map(|d| d.signature),
        Ok("t.new()".to_string())
    );
    let found = service.search(&me, "new capability").await.expect("search");
    assert_eq!(found.results[0].name, "t.new");
    let fresh = service
        .execute(
            &me,
            "def main():\n    return t.new()\n",
            ExecuteOptions::default(),
        )
        .await;
    assert_eq!(
        fresh.map(|d| d.to_json_string()),
        Ok(r#"{"v":"second"}"#.into())
    );
    let gone = service
        .execute(
            &me,
            "def main():\n    return t.old()\n",
            ExecuteOptions::default(),
        )
        .await;
    assert!(gone.is_err());
    // The running execution finishes on the catalog it started with.
    open.notify_one();
    let result = running.await.expect("joined");
    assert_eq!(
        result.map(|d| d.to_json_string()),
        Ok(r#"{"v":"first"}"#.into())
    );
}
