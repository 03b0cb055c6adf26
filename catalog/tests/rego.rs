//! Rego policies: decisions from subject, capability and canonical
//! arguments; load errors; failures that deny.
#![cfg(feature = "rego")]

use codemode_catalog::{
    AuthorizationRequest, Capability, CapabilityId, CapabilityName, Catalog, CodeMode, Data,
    Decision, ExecuteOptions, HandlerError, Policy, RegoPolicy, Subject,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

const POLICY: &str = r#"
package codemode

import rego.v1

default allow := false

allow if {
    input.subject.attributes.role == "admin"
}

allow if {
    input.capability.id in data.readers[input.subject.id]
    not input.arguments.key == "secret"
}

weird := "yes"
"#;

fn policy() -> RegoPolicy {
    RegoPolicy::builder()
        .module("authz.rego", POLICY)
        .data(json!({"readers": {"alice": ["records.entry.lookup"]}}))
        .build()
        .unwrap()
}

fn decide(p: &RegoPolicy, subject: &Subject, id: &str, args: Data) -> Result<Decision, String> {
    let id = CapabilityId::new(id).unwrap();
    let name = CapabilityName::new("records.lookup").unwrap();
    p.authorize(&AuthorizationRequest {
        subject,
        capability_id: &id,
        name: &name,
        annotations: Default::default(),
        arguments: &args,
        deadline: None,
    })
    .map_err(|e| e.to_string())
}

fn key(k: &str) -> Data {
    Data::Map(vec![("key".into(), Data::Str(k.into()))])
}

#[test]
fn decisions_follow_the_policy() {
    let p = policy();
    let alice = Subject::new("alice");
    let bob = Subject::new("bob");
    let admin = Subject::new("carol").with_attribute("role", json!("admin"));
    assert_eq!(
        decide(&p, &alice, "records.entry.lookup", key("a")),
        Ok(Decision::Allow)
    );
    assert_eq!(
        decide(&p, &alice, "records.entry.lookup", key("secret")),
        Ok(Decision::Deny)
    );
    assert_eq!(decide(&p, &alice, "other.id", key("a")), Ok(Decision::Deny));
    assert_eq!(
        decide(&p, &bob, "records.entry.lookup", key("a")),
        Ok(Decision::Deny)
    );
    assert_eq!(
        decide(&p, &admin, "anything", Data::Map(vec![])),
        Ok(Decision::Allow)
    );
}

#[test]
fn a_non_boolean_rule_is_a_policy_failure_and_undefined_denies() {
    let weird = RegoPolicy::builder()
        .module("authz.rego", POLICY)
        .rule("data.codemode.weird")
        .build()
        .unwrap_err();
    assert!(
        weird
            .to_string()
            .starts_with("invalid Rego policy: rule data.codemode.weird"),
        "{weird}"
    );
    let undefined = RegoPolicy::builder()
        .module(
            "p.rego",
            "package p\nimport rego.v1\nallow if input.subject.id == \"x\"\n",
        )
        .rule("data.p.allow")
        .build()
        .unwrap();
    assert_eq!(
        decide(&undefined, &Subject::new("y"), "a", Data::Map(vec![])),
        Ok(Decision::Deny)
    );
    assert_eq!(
        decide(&undefined, &Subject::new("x"), "a", Data::Map(vec![])),
        Ok(Decision::Allow)
    );
}

#[test]
fn load_errors_are_reported_at_build() {
    assert!(RegoPolicy::builder().build().is_err());
    assert!(RegoPolicy::builder()
        .module("bad.rego", "package p\nallow if {")
        .build()
        .is_err());
    assert!(RegoPolicy::builder()
        .module("authz.rego", POLICY)
        .rule("data.nope.allow")
        .build()
        .is_err());
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct In {
    key: String,
    limit: Option<i64>,
}

#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_authorizes_with_rego() {
    let catalog = Catalog::builder()
        .capability(
            Capability::new("records.lookup", |_: In| async {
                Ok::<_, HandlerError>(Out { ok: true })
            })
            .id("records.entry.lookup")
            .summary("Look up one record by key."),
        )
        .build()
        .unwrap();
    let cm = CodeMode::new(catalog, policy());
    let run = |who: &'static str, k: &'static str| {
        let cm = cm.clone();
        async move {
            let source =
                format!("def main():\n    return records.lookup(key=\"{k}\", limit=None)\n");
            cm.execute(&Subject::new(who), &source, ExecuteOptions::default())
                .await
                .map(|d| d.to_json_string())
                .map_err(|e| e.to_string())
        }
    };
    assert_eq!(run("alice", "a").await, Ok(r#"{"ok":true}"#.into()));
    assert_eq!(
        run("alice", "secret").await,
        Err("permission denied".into())
    );
    assert_eq!(run("bob", "a").await, Err("permission denied".into()));
}

/// A policy that loops for any real capability (the build's probe, with an
/// empty capability name, is decided at once).
const LOOPING: &str = r#"
package codemode

import rego.v1

default allow := false

allow if {
    input.capability.name != ""
    every i in numbers.range(1, 100000) {
        every j in numbers.range(1, 100000) {
            i + j > 0
        }
    }
}
"#;

#[test]
fn a_looping_policy_stops_at_its_time_limit() {
    let p = RegoPolicy::builder()
        .module("loop.rego", LOOPING)
        .time_limit(std::time::Duration::from_millis(200))
        .build()
        .unwrap();
    assert_eq!(p.time_limit(), std::time::Duration::from_millis(200));
    let started = std::time::Instant::now();
    let e =
        decide(&p, &Subject::new("alice"), "records.entry.lookup", key("a")).expect_err("stopped");
    assert!(e.contains("time limit"), "{e}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let default = RegoPolicy::builder().module("loop.rego", LOOPING).build();
    assert_eq!(
        default.unwrap().time_limit(),
        RegoPolicy::DEFAULT_TIME_LIMIT
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_looping_policy_stops_at_the_execution_deadline() {
    use std::time::{Duration, Instant};
    let catalog = Catalog::builder()
        .capability(
            Capability::new("records.lookup", |_: In| async {
                Ok::<_, HandlerError>(Out { ok: true })
            })
            .id("records.entry.lookup")
            .summary("Look up one record by key."),
        )
        .build()
        .unwrap();
    // The policy's own limit is far away: the execution's 300 ms end it.
    let policy = RegoPolicy::builder()
        .module("loop.rego", LOOPING)
        .time_limit(Duration::from_secs(60))
        .build()
        .unwrap();
    let mut config = codemode_catalog::Config::default();
    config.limits.max_time = Duration::from_millis(300);
    let cm = CodeMode::with_config(catalog, std::sync::Arc::new(policy), config);
    let started = Instant::now();
    let outcome = cm
        .execute(
            &Subject::new("alice"),
            "def main():\n    return records.lookup(key=\"a\", limit=None)\n",
            ExecuteOptions::default(),
        )
        .await;
    assert_eq!(
        outcome.map_err(|e| e.to_string()),
        Err("resource limit exceeded".into())
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}
