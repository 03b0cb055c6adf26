//! Fuzzes the MCP adapter's handling of `tools/call`: arbitrary arguments
//! (the first byte picks the tool, the rest is the JSON `arguments` object,
//! or the one property's value when it is not an object) go over one
//! long-lived in-memory connection to the real rmcp handler serving the
//! `conformance` catalog. A call whose arguments are not exactly the one
//! string property, or an unknown tool, must be a JSON-RPC -32602 error; a
//! well-formed call must be a tool result: structured content mirrored in
//! one text item, or `isError` with one contract text and no structured
//! content. The connection must keep serving after every call.
#![no_main]

use codemode_fuzz::{conformance_service, runtime};
use codemode_server::CodeModeServer;
use libfuzzer_sys::fuzz_target;
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};
use std::sync::{Mutex, OnceLock};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

/// The contract's error texts (the prefixed ones by their prefix).
const TEXTS: &[&str] = &[
    "unauthenticated",
    "capability not found",
    "invalid program",
    "invalid capability arguments",
    "permission denied",
    "authorization policy failure",
    "resource limit exceeded",
    "capability failed",
    "context canceled",
    "context deadline exceeded",
];

const TOOLS: &[(&str, &str)] = &[
    ("search_api", "query"),
    ("describe_api", "name"),
    ("execute", "source"),
    ("run", "source"),
];

struct Client {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
    next_id: u64,
}

impl Client {
    /// Sends one request and returns its response.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("the server reads");
        let line = self
            .lines
            .next_line()
            .await
            .expect("the server writes")
            .expect("the server keeps the connection open");
        let response: Value = serde_json::from_str(&line).expect("a JSON response");
        assert_eq!(response["id"], id, "{response}");
        response
    }
}

/// One connection for the whole run, initialized once.
fn client() -> &'static Mutex<Client> {
    static CLIENT: OnceLock<Mutex<Client>> = OnceLock::new();
    CLIENT.get_or_init(|| {
        runtime().block_on(async {
            let server = CodeModeServer::local(conformance_service().clone());
            let (client_end, server_end) = tokio::io::duplex(1 << 20);
            tokio::spawn(async move {
                if let Ok(running) = server.serve(tokio::io::split(server_end)).await {
                    let _ = running.waiting().await;
                }
            });
            let (read, write) = tokio::io::split(client_end);
            let mut client = Client {
                lines: BufReader::new(read).lines(),
                write,
                next_id: 0,
            };
            let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "1"}});
            let response = client.request("initialize", init).await;
            assert!(response["result"]["serverInfo"].is_object(), "{response}");
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            client
                .write
                .write_all(format!("{initialized}\n").as_bytes())
                .await
                .expect("the server reads");
            Mutex::new(client)
        })
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (tool, property) = TOOLS[usize::from(pick) % TOOLS.len()];
    let arguments = if rest.is_empty() {
        None
    } else {
        match serde_json::from_slice::<Value>(rest) {
            Ok(Value::Object(o)) => Some(o),
            Ok(other) => Some(Map::from_iter([(property.to_string(), other)])),
            Err(_) => {
                let text = String::from_utf8_lossy(rest).into_owned();
                Some(Map::from_iter([(
                    property.to_string(),
                    Value::String(text),
                )]))
            }
        }
    };
    let well_formed = tool != "run"
        && arguments
            .as_ref()
            .is_some_and(|a| a.len() == 1 && a.get(property).is_some_and(Value::is_string));
    let mut params = json!({ "name": tool });
    if let Some(arguments) = arguments {
        params["arguments"] = Value::Object(arguments);
    }
    let mut client = client().lock().expect("one fuzzing thread");
    let response = runtime().block_on(client.request("tools/call", params));
    if !well_formed {
        assert_eq!(response["error"]["code"], -32602, "{response}");
        return;
    }
    let result = &response["result"];
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "{response}");
    let text = content[0]["text"].as_str().expect("a text item");
    if result["isError"] == true {
        assert!(result.get("structuredContent").is_none(), "{response}");
        assert!(
            TEXTS
                .iter()
                .any(|t| text == *t || text.starts_with(&format!("{t}: "))),
            "not a contract text: {text}"
        );
    } else {
        let structured = &result["structuredContent"];
        assert!(structured.is_object(), "{response}");
        let mirrored: Value = serde_json::from_str(text).expect("the text item is JSON");
        assert_eq!(&mirrored, structured, "{response}");
    }
});
