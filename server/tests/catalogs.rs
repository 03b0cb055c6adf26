//! The built-in catalogs through the CodeMode service: every row of the
//! `demo` and `conformance` tables, with exact outputs and error texts.

use codemode_catalog::{CancellationToken, CodeMode, Config, ExecuteOptions, Subject};
use codemode_server::{catalog_sources, conformance_disabled, load_catalogs, DEMO_DATA_VERSION};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn service(sources: &[&str]) -> CodeMode {
    let sources: Vec<String> = sources.iter().map(|s| s.to_string()).collect();
    load_catalogs(&sources, &[], Config::default()).expect("valid catalogs")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Runs `def main(): return <expr>` and gives the JSON result or the error
/// text.
fn run(service: &CodeMode, expr: &str) -> Result<Value, String> {
    let source = format!("def main():\n    return {expr}\n");
    runtime().block_on(async {
        service
            .execute(&Subject::new("t"), &source, ExecuteOptions::default())
            .await
            .map(|d| serde_json::from_str(&d.to_json_string()).expect("json"))
            .map_err(|e| e.to_string())
    })
}

fn search(service: &CodeMode, query: &str) -> Vec<String> {
    runtime().block_on(async {
        let found = service
            .search(&Subject::new("t"), query)
            .await
            .expect("search");
        found.results.into_iter().map(|r| r.name).collect()
    })
}

fn describe(service: &CodeMode, name: &str) -> Result<Value, String> {
    runtime().block_on(async {
        service
            .describe(&Subject::new("t"), name)
            .await
            .map(|d| serde_json::to_value(d).expect("json"))
            .map_err(|e| e.to_string())
    })
}

#[test]
fn demo_signatures() {
    let s = service(&["demo"]);
    let sig = |n: &str| describe(&s, n).expect("described")["signature"].clone();
    assert_eq!(
        sig("records.lookup"),
        "records.lookup(*, key: str, limit: int | None)"
    );
    assert_eq!(
        sig("records.search"),
        "records.search(*, count: int, active: bool, score: float, label: str | None)"
    );
    assert_eq!(sig("records.status"), "records.status()");
    assert_eq!(
        sig("shipping.quote"),
        "shipping.quote(*, weight_grams: int)"
    );
}

#[test]
fn demo_describe_lookup_is_exact() {
    let s = service(&["demo"]);
    assert_eq!(
        describe(&s, "records.lookup").expect("described"),
        json!({
            "name": "records.lookup",
            "signature": "records.lookup(*, key: str, limit: int | None)",
            "summary": "Look up one record by key.",
            "description": "Returns the records of the built-in data set whose key starts with `key`, in key order, at most `limit` of them (default 10, 1 to 100).",
            "input": [
                {"name": "key", "type": "str", "required": true},
                {"name": "limit", "type": "int | None", "required": false}
            ],
            "output": [
                {"name": "records", "type": "list[{key: str, id: str, label: str, active: bool, score: float}]", "required": true}
            ]
        })
    );
    let search = describe(&s, "records.search").expect("described");
    assert_eq!(
        search["output"],
        json!([{"name": "items", "type": "list[{id: str, active: bool, score: float}]", "required": true}])
    );
}

#[test]
fn demo_lookup() {
    let s = service(&["demo"]);
    let keys = |v: Value| -> Vec<String> {
        v["records"]
            .as_array()
            .expect("records")
            .iter()
            .map(|r| r["key"].as_str().expect("key").to_string())
            .collect()
    };
    assert_eq!(
        keys(run(&s, r#"records.lookup(key="alpha", limit=2)"#).expect("ok")),
        ["alpha", "alpha-beta"]
    );
    assert_eq!(
        keys(run(&s, r#"records.lookup(key="alpha")"#).expect("ok")),
        ["alpha", "alpha-beta", "alpha-gamma"]
    );
    assert_eq!(
        keys(run(&s, r#"records.lookup(key="")"#).expect("ok")).len(),
        8
    );
    assert_eq!(
        keys(run(&s, r#"records.lookup(key="zzz", limit=None)"#).expect("ok")),
        Vec::<String>::new()
    );
    assert_eq!(
        run(&s, r#"records.lookup(key="beta")"#).expect("ok"),
        json!({"records": [{"key": "beta", "id": "rec-004", "label": "green", "active": true, "score": 3.0}]})
    );
    assert_eq!(
        run(&s, r#"records.lookup(key="a", limit=0)"#),
        Err("invalid capability arguments: limit: must be at least 1".into())
    );
    assert_eq!(
        run(&s, r#"records.lookup(key="a", limit=101)"#),
        Err("invalid capability arguments: limit: must be at most 100".into())
    );
    assert!(run(&s, r#"records.lookup("a")"#)
        .expect_err("positional")
        .starts_with("invalid capability arguments"));
    assert!(run(&s, r#"records.lookup(limit=1)"#)
        .expect_err("missing key")
        .starts_with("invalid capability arguments"));
}

#[test]
fn demo_search_status_quote() {
    let s = service(&["demo"]);
    assert_eq!(
        run(&s, "records.search(count=3, active=True, score=1.5)").expect("ok"),
        json!({"items": [
            {"id": "rec-001", "active": true, "score": 2.5},
            {"id": "rec-003", "active": true, "score": 1.5},
            {"id": "rec-004", "active": true, "score": 3.0}
        ]})
    );
    assert_eq!(
        run(
            &s,
            r#"records.search(count=10, active=True, score=0.0, label="red")"#
        )
        .expect("ok"),
        json!({"items": [
            {"id": "rec-001", "active": true, "score": 2.5},
            {"id": "rec-003", "active": true, "score": 1.5},
            {"id": "rec-007", "active": true, "score": 2.0}
        ]})
    );
    assert_eq!(
        run(&s, "records.search(count=0, active=False, score=0.0)").expect("ok"),
        json!({"items": []})
    );
    assert_eq!(
        run(&s, "records.status()").expect("ok"),
        json!({"count": 8, "version": demo_version()})
    );
    assert_eq!(
        run(&s, "shipping.quote(weight_grams=1000)").expect("ok"),
        json!({"price_cents": 500})
    );
    assert_eq!(
        run(&s, "shipping.quote(weight_grams=1001)").expect("ok"),
        json!({"price_cents": 900})
    );
    assert_eq!(
        run(&s, "shipping.quote(weight_grams=5001)"),
        Err("invalid capability arguments: weight_grams: must be at most 5000".into())
    );
    assert_eq!(
        run(&s, "shipping.quote(weight_grams=0)"),
        Err("invalid capability arguments: weight_grams: must be at least 1".into())
    );
}

fn demo_version() -> &'static str {
    DEMO_DATA_VERSION
}

#[test]
fn demo_search_finds_each_capability() {
    let s = service(&["demo"]);
    assert_eq!(search(&s, "look up record")[0], "records.lookup");
    assert_eq!(search(&s, "records.lookup")[0], "records.lookup");
    assert_eq!(search(&s, "search records score")[0], "records.search");
    assert_eq!(search(&s, "dataset version")[0], "records.status");
    assert_eq!(search(&s, "shipping quote")[0], "shipping.quote");
    assert_eq!(search(&s, "parcel cost"), ["shipping.quote"]);
}

#[test]
fn conformance_echo_add_present() {
    let s = service(&["conformance"]);
    assert_eq!(
        run(&s, r#"conformance.echo(value="hé")"#).expect("ok"),
        json!({"value": "hé"})
    );
    assert_eq!(
        run(&s, "conformance.add(a=2, b=-5)").expect("ok"),
        json!({"sum": -3})
    );
    assert_eq!(
        run(&s, "conformance.add(a=9223372036854775807, b=1)"),
        Err("capability failed".into())
    );
    assert_eq!(
        run(&s, "conformance.present()").expect("ok"),
        json!({"names": []})
    );
    assert_eq!(
        run(&s, r#"conformance.present(s="x", i=None, f=1.5, b=False)"#).expect("ok"),
        json!({"names": ["b", "f", "s"]})
    );
}

#[test]
fn conformance_items_and_deep() {
    let s = service(&["conformance"]);
    assert_eq!(
        run(&s, "conformance.items(n=2)").expect("ok"),
        json!({"items": [{"index": 0, "label": "item-0"}, {"index": 1, "label": "item-1"}]})
    );
    assert_eq!(
        run(&s, "conformance.items(n=0)").expect("ok"),
        json!({"items": []})
    );
    assert_eq!(
        run(&s, "conformance.items(n=1000001)"),
        Err("invalid capability arguments: n: must be at most 1000000".into())
    );
    assert_eq!(
        run(&s, "conformance.items(n=-1)"),
        Err("invalid capability arguments: n: must be at least 0".into())
    );
    assert_eq!(
        run(&s, "conformance.items(n=1000000)"),
        Err("resource limit exceeded".into())
    );
    assert_eq!(
        run(&s, "conformance.deep()").expect("ok"),
        json!({"a": {"b": {"c": {"d": 1}}}})
    );
    assert_eq!(
        describe(&s, "conformance.deep").expect("described")["output"],
        json!([{"name": "a", "type": "{b: {c: {d: int}}}", "required": true}])
    );
}

#[test]
fn conformance_failures() {
    let s = service(&["conformance"]);
    assert_eq!(
        run(&s, "conformance.fail(public=True)"),
        Err("capability failed: conformance failure".into())
    );
    let private = run(&s, "conformance.fail(public=False)").expect_err("fails");
    assert_eq!(private, "capability failed");
    assert!(!private.contains("SECRET"));
    assert_eq!(
        run(&s, "conformance.panic()"),
        Err("capability failed".into())
    );
    // The service keeps serving after a panic.
    assert_eq!(
        run(&s, "conformance.add(a=1, b=1)").expect("ok"),
        json!({"sum": 2})
    );
    assert_eq!(
        run(&s, "conformance.nan()"),
        Err("capability failed".into())
    );
    assert_eq!(
        run(&s, "conformance.huge_unsigned()"),
        Err("capability failed".into())
    );
    assert_eq!(
        run(&s, "conformance.denied()"),
        Err("permission denied".into())
    );
    assert_eq!(
        run(&s, "conformance.policy_error()"),
        Err("authorization policy failure".into())
    );
}

#[test]
fn conformance_hidden_reads_like_a_missing_name() {
    let s = service(&["conformance"]);
    assert_eq!(
        describe(&s, "conformance.hidden"),
        Err("capability not found".into())
    );
    assert!(search(&s, "hidden capability").is_empty());
    assert!(search(&s, "conformance.hidden")
        .iter()
        .all(|n| n != "conformance.hidden"));
    let hidden = run(&s, "conformance.hidden()").expect_err("absent");
    let missing = run(&s, "conformance.nothing()").expect_err("absent");
    assert_eq!(hidden.replace("hidden", "nothing"), missing);
    assert!(hidden.starts_with("invalid program: "), "{hidden}");
}

#[test]
fn conformance_sleep() {
    let s = service(&["conformance"]);
    assert_eq!(
        run(&s, "conformance.sleep(ms=5)").expect("ok"),
        json!({"slept": 5})
    );
    assert_eq!(
        run(&s, "conformance.sleep(ms=60001)"),
        Err("invalid capability arguments: ms: must be at most 60000".into())
    );
    // Cancellation stops the sleep early.
    // The outcome on every attempt, the time on the best of up to three:
    // a sleep that ran its 60 s would fail all three.
    let rt = runtime();
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        let outcome = rt.block_on(async {
            let cancel = CancellationToken::new();
            let trigger = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                trigger.cancel();
            });
            s.execute(
                &Subject::new("t"),
                "def main():\n    return conformance.sleep(ms=60000)\n",
                ExecuteOptions::cancelled_by(cancel),
            )
            .await
        });
        assert_eq!(
            outcome.expect_err("cancelled").to_string(),
            "context canceled"
        );
        best = best.min(started.elapsed());
        if best < Duration::from_secs(3) {
            break;
        }
    }
    assert!(best < Duration::from_secs(3), "{best:?}");
}

#[test]
fn conformance_search_finds_each_capability() {
    let s = service(&["conformance"]);
    for (query, name) in [
        ("echo string", "conformance.echo"),
        ("add integers", "conformance.add"),
        ("optional arguments present", "conformance.present"),
        ("numbered items", "conformance.items"),
        ("nested result", "conformance.deep"),
        ("always fail", "conformance.fail"),
        ("panic handler", "conformance.panic"),
        ("non-finite float", "conformance.nan"),
        ("unsigned integer", "conformance.huge_unsigned"),
        ("sleep milliseconds", "conformance.sleep"),
        ("policy denies", "conformance.denied"),
        ("policy fails evaluate", "conformance.policy_error"),
    ] {
        assert_eq!(
            search(&s, query).first().map(String::as_str),
            Some(name),
            "{query}"
        );
    }
}

#[test]
fn both_catalogs_load_together_and_disable_by_id() {
    let s = service(&["demo", "conformance"]);
    assert_eq!(
        run(&s, "conformance.denied()"),
        Err("permission denied".into())
    );
    assert_eq!(
        run(&s, "shipping.quote(weight_grams=1)").expect("ok"),
        json!({"price_cents": 500})
    );
    let disabled = load_catalogs(
        &["demo".to_string()],
        &["records.entry.lookup".to_string()],
        Config::default(),
    )
    .expect("valid");
    assert_eq!(
        describe(&disabled, "records.lookup"),
        Err("capability not found".into())
    );
    assert!(load_catalogs(&["demo".into(), "demo".into()], &[], Config::default()).is_err());
    assert!(load_catalogs(&["demo".into()], &["nope".into()], Config::default()).is_err());
    assert_eq!(conformance_disabled(), ["conformance.hidden"]);
}

#[test]
fn the_built_in_catalogs_are_annotated_truthfully() {
    use codemode_catalog::Annotations;
    let sources = vec!["demo".to_string(), "conformance".to_string()];
    let parts = catalog_sources(&sources, &[]).expect("sources");
    let mut seen = 0;
    for cap in &parts.capabilities {
        let a = cap.annotation_values();
        if cap.name() == "conformance.delete" {
            assert!(a.destructive && !a.read_only, "{a:?}");
        } else {
            assert_eq!(a, Annotations::read_only_closed(), "{}", cap.name());
        }
        seen += 1;
    }
    assert_eq!(seen, 18);
    let service = service(&["conformance"]);
    assert_eq!(
        run(&service, r#"conformance.delete(key="k1")"#),
        Ok(json!({"deleted": "k1"}))
    );
    assert_eq!(
        runtime()
            .block_on(service.describe(&Subject::new("t"), "conformance.delete"))
            .map(|d| d.signature),
        Ok("conformance.delete(*, key: str)".to_string())
    );
    assert_eq!(search(&service, "delete entry")[0], "conformance.delete");
}
