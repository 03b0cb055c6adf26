//! Approval of writes through the MCP client, with rmcp's client: a call
//! the `[approval]` policy marks *ask* runs only when the client's
//! elicitation answer is `accept`; decline, cancel, no answer in time, a
//! client without the elicitation capability and stateless HTTP are
//! `permission denied`; read-only calls are never asked; the wait does not
//! count against the time limit; a host's approver replaces the client;
//! and the binary reads `[approval]` from its config.

mod common;

use codemode_catalog::{
    Annotations, Approval, ApprovalRequest, ApproverFn, Capability, CodeMode, Config, HandlerError,
    Limits,
};
use codemode_server::AskPolicy;
use codemode_server::CodeModeServer;
use codemode_server::{all_of_policies, catalog_sources};
use codemode_server::{router, HttpOptions};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const DELETE: &str = "def main():\n    return conformance.delete(key=\"k1\")\n";

/// A client that declares elicitation and answers every request with
/// `action` after `delay`, recording the messages.
#[derive(Clone)]
struct Person {
    action: ElicitationAction,
    delay: Duration,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl Person {
    fn new(action: ElicitationAction, delay: Duration) -> Person {
        Person {
            action,
            delay,
            asked: Arc::default(),
        }
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("person", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let request = serde_json::to_value(&request).unwrap_or(Value::Null);
        self.asked.lock().unwrap().push(request);
        tokio::time::sleep(self.delay).await;
        let mut result = ElicitResult::new(self.action.clone());
        if self.action == ElicitationAction::Accept {
            result = result.with_content(json!({}));
        }
        Ok(result)
    }
}

/// The conformance catalog asking for destructive calls, with a time
/// limit and an approval timeout.
fn service(max_time: Duration, approval_timeout: Duration) -> CodeMode {
    let parts = catalog_sources(&["conformance".to_string()], &[]).expect("sources");
    let policy = all_of_policies(vec![
        parts.policy.clone(),
        Arc::new(AskPolicy::new(&["destructive".to_string()])),
    ]);
    let config = Config {
        limits: Limits {
            max_time,
            ..Limits::default()
        },
        approval_timeout,
        ..Config::default()
    };
    CodeMode::with_config(parts.build_with([]).expect("catalog"), policy, config)
}

/// Serves `server` over an in-memory stdio-like pipe to `client`.
async fn connect<C: ClientHandler>(
    server: CodeModeServer,
    client: C,
) -> RunningService<RoleClient, C> {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_end).await.expect("initialize")
}

fn execute(source: &str) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({ "source": source }) else {
        unreachable!()
    };
    CallToolRequestParams::new("execute").with_arguments(arguments)
}

/// The text of a tool result: the structured result or the error.
async fn run<C: ClientHandler>(client: &RunningService<RoleClient, C>, source: &str) -> Value {
    let result = client.call_tool(execute(source)).await.expect("tools/call");
    match result.structured_content {
        Some(v) => v,
        None => json!(result.content[0].as_text().expect("text").text),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_ask_runs_the_call_with_the_capability_and_arguments_shown() {
    let person = Person::new(ElicitationAction::Accept, Duration::ZERO);
    let asked = person.asked.clone();
    let server = CodeModeServer::local(service(Duration::from_secs(5), Duration::from_secs(5)));
    let client = connect(server, person).await;
    assert_eq!(
        run(&client, DELETE).await,
        json!({"result": {"deleted": "k1"}})
    );
    // Read-only capabilities are not asked.
    let echo = "def main():\n    return conformance.echo(value=\"x\")\n";
    assert_eq!(run(&client, echo).await, json!({"result": {"value": "x"}}));
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0],
        json!({
            "mode": "form",
            "message": "Allow the program to call conformance.delete (conformance.delete)?\n\
                        Delete an entry by key (a destructive capability for approval tests).\n\
                        Arguments: {\"key\":\"k1\"}",
            "requestedSchema": {"type": "object", "properties": {}}
        })
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CreateItem {
    note: String,
    target: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Created {
    target: String,
    note_bytes: usize,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct TagAll {
    tags: Vec<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Tagged {
    tagged: usize,
}

/// The conformance catalog plus two destructive capabilities with long
/// arguments, asking for destructive calls.
fn items_service() -> CodeMode {
    let destructive = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };
    let create = Capability::new("items.create_item", |i: CreateItem| async move {
        Ok::<_, HandlerError>(Created {
            target: i.target,
            note_bytes: i.note.len(),
        })
    })
    .summary("Create an item.")
    .annotations(destructive);
    let tag = Capability::new("items.tag_all", |i: TagAll| async move {
        Ok::<_, HandlerError>(Tagged {
            tagged: i.tags.len(),
        })
    })
    .summary("Tag every item.")
    .annotations(destructive);
    let parts = catalog_sources(&["conformance".to_string()], &[]).expect("sources");
    let policy = all_of_policies(vec![
        parts.policy.clone(),
        Arc::new(AskPolicy::new(&["destructive".to_string()])),
    ]);
    CodeMode::with_config(
        parts.build_with([create, tag]).expect("catalog"),
        policy,
        Config::default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_value_cannot_hide_another_key_from_the_person() {
    let person = Person::new(ElicitationAction::Accept, Duration::ZERO);
    let asked = person.asked.clone();
    let client = connect(CodeModeServer::local(items_service()), person).await;
    let source = "def main():\n    return items.create_item(note = \"x\" * 2100, target = \"production-db-DROP\")\n";
    assert_eq!(
        run(&client, source).await,
        json!({"result": {"target": "production-db-DROP", "note_bytes": 2100}})
    );
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    let message = asked[0]["message"].as_str().expect("message");
    let note = format!("\"note\":\"{}…\" (2100 bytes)", "x".repeat(200));
    assert!(
        message.ends_with(&format!(
            "Arguments: {{{note},\"target\":\"production-db-DROP\"}}"
        )),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_too_many_to_show_are_refused_without_asking() {
    let person = Person::new(ElicitationAction::Accept, Duration::ZERO);
    let asked = person.asked.clone();
    let client = connect(CodeModeServer::local(items_service()), person).await;
    let source =
        "def main():\n    return items.tag_all(tags = [\"tag-%d\" % i for i in range(1000)])\n";
    assert_eq!(run(&client, source).await, json!("permission denied"));
    assert!(asked.lock().unwrap().is_empty());
    // A few tags are shown and asked.
    let few = "def main():\n    return items.tag_all(tags = [\"a\", \"b\"])\n";
    assert_eq!(run(&client, few).await, json!({"result": {"tagged": 2}}));
    assert_eq!(asked.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_cancel_timeout_and_no_elicitation_are_permission_denied() {
    for (action, delay) in [
        (ElicitationAction::Decline, Duration::ZERO),
        (ElicitationAction::Cancel, Duration::ZERO),
        (ElicitationAction::Accept, Duration::from_secs(2)),
    ] {
        let server =
            CodeModeServer::local(service(Duration::from_secs(5), Duration::from_millis(300)));
        let client = connect(server, Person::new(action.clone(), delay)).await;
        let started = Instant::now();
        assert_eq!(
            run(&client, DELETE).await,
            json!("permission denied"),
            "{action:?}"
        );
        assert!(started.elapsed() < Duration::from_millis(1500));
    }
    // A client that did not declare elicitation is not asked.
    let server = CodeModeServer::local(service(Duration::from_secs(5), Duration::from_secs(5)));
    let client = connect(server, ()).await;
    assert_eq!(run(&client, DELETE).await, json!("permission denied"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_person_does_not_count_against_the_time_limit() {
    let person = Person::new(ElicitationAction::Accept, Duration::from_millis(500));
    let server = CodeModeServer::local(service(Duration::from_millis(300), Duration::from_secs(5)));
    let client = connect(server, person).await;
    let twice =
        "def main():\n    return [conformance.delete(key=\"a\"), conformance.delete(key=\"b\")]\n";
    assert_eq!(
        run(&client, twice).await,
        json!({"result": [{"deleted": "a"}, {"deleted": "b"}]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosts_approver_replaces_the_client() {
    let approver = ApproverFn(|r: &ApprovalRequest<'_>| {
        let yes = r.subject.id() == "local" && r.annotations.destructive;
        async move {
            if yes {
                Approval::Approved
            } else {
                Approval::Refused
            }
        }
    });
    let server = CodeModeServer::local(service(Duration::from_secs(5), Duration::from_secs(5)))
        .with_approver(Arc::new(approver));
    // The client would decline; the host's approver decides.
    let person = Person::new(ElicitationAction::Decline, Duration::ZERO);
    let asked = person.asked.clone();
    let client = connect(server, person).await;
    assert_eq!(
        run(&client, DELETE).await,
        json!({"result": {"deleted": "k1"}})
    );
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_http_cannot_ask_and_refuses() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let app = router(
        service(Duration::from_secs(5), Duration::from_secs(5)),
        &HttpOptions::default(),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let person = Person::new(ElicitationAction::Accept, Duration::ZERO);
    let asked = person.asked.clone();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let client = person.serve(transport).await.expect("initialize");
    assert_eq!(run(&client, DELETE).await, json!("permission denied"));
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_asks_as_its_config_says() {
    let dir = std::env::temp_dir().join(format!("codemode-approval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("codemode.toml");
    std::fs::write(
        &config,
        "catalogs = [\"conformance\"]\n[approval]\nask = [\"destructive\", \"conformance.echo\"]\ntimeout_ms = 5000\n",
    )
    .expect("write");
    for (action, want) in [
        (
            ElicitationAction::Accept,
            json!({"result": {"deleted": "k1"}}),
        ),
        (ElicitationAction::Decline, json!("permission denied")),
    ] {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_codemode"));
        command
            .args(["serve", "--config"])
            .arg(&config)
            .env_remove("RUST_LOG");
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let person = Person::new(action, Duration::ZERO);
        let asked = person.asked.clone();
        let client = person.serve(transport).await.expect("initialize");
        assert_eq!(run(&client, DELETE).await, want);
        // An ID in the list is asked too, however it is annotated.
        let echo = "def main():\n    return conformance.echo(value=\"x\")\n";
        run(&client, echo).await;
        assert_eq!(asked.lock().unwrap().len(), 2);
        client.cancel().await.expect("close");
    }
    // `run` has nobody to ask.
    let out = common::run_codemode(
        &["run", "--config", config.to_str().expect("utf-8"), "-"],
        DELETE,
        &[],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().next(),
        Some("permission denied")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Python `mcp` client of the test venv, if it is there.
fn python_mcp() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("HOME")?;
    let python = std::path::Path::new(&home).join(".cache/codemode-mcp-client/bin/python");
    python.exists().then_some(python)
}

#[test]
fn the_python_clients_elicitation_callback_accepts_declines_and_times_out() {
    let Some(python) = python_mcp() else {
        eprintln!(
            "skipped: no Python mcp client at ~/.cache/codemode-mcp-client \
             (python3 -m venv ~/.cache/codemode-mcp-client && \
             ~/.cache/codemode-mcp-client/bin/pip install mcp)"
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("codemode-elicit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("codemode.toml");
    std::fs::write(
        &config,
        "catalogs = [\"conformance\"]\n[approval]\nask = [\"destructive\"]\ntimeout_ms = 500\n",
    )
    .expect("write");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixture/elicit.py");
    let message = "Allow the program to call conformance.delete (conformance.delete)?\n\
                   Delete an entry by key (a destructive capability for approval tests).\n\
                   Arguments: {\"key\":\"k1\"}";
    let cases = [
        (
            "accept",
            json!(message),
            "{\"result\":{\"deleted\":\"k1\"}}",
            false,
        ),
        ("decline", json!(message), "permission denied", true),
        ("cancel", json!(message), "permission denied", true),
        ("timeout", json!(message), "permission denied", true),
        ("none", Value::Null, "permission denied", true),
    ];
    for (answer, asked, text, error) in cases {
        let out = std::process::Command::new(&python)
            .arg(script)
            .arg(env!("CARGO_BIN_EXE_codemode"))
            .arg(&config)
            .arg(answer)
            .arg(DELETE)
            .env_remove("RUST_LOG")
            .output()
            .expect("run python");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
            panic!(
                "{answer}: {stdout} {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(
            line,
            json!({"asked": asked, "text": text, "error": error}),
            "{answer}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_ask_entry_that_names_nothing_is_refused_at_start() {
    let dir = std::env::temp_dir().join(format!("codemode-ask-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("codemode.toml");
    for (entry, refused) in [
        ("Destructive", true),
        ("conformance.delete_item", true),
        ("conformance.delete", false),
        ("destructive", false),
        // A tool of a configured upstream is listed only once connected.
        ("upstream.tracker.anything", true),
    ] {
        std::fs::write(
            &config,
            format!(
                "catalogs = [\"conformance\"]\n[approval]\nask = [\"read_only\", \"{entry}\"]\n"
            ),
        )
        .expect("write");
        let out = common::run_codemode(
            &["run", "--config", config.to_str().expect("utf-8"), "-"],
            "def main():\n    return 1\n",
            &[],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        if refused {
            assert_eq!(out.status.code(), Some(2), "{entry}: {stderr}");
            assert!(
                stderr.contains(&format!("[approval] ask entry \"{entry}\"")),
                "{entry}: {stderr}"
            );
        } else {
            assert!(out.status.success(), "{entry}: {stderr}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
