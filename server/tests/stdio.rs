//! MCP over stdio through the built binary: `codemode serve` spoken to in
//! raw JSON-RPC on its stdin and stdout — initialize, the three tools with
//! their exact descriptions and schemas, successes with structured content
//! and a text mirror, tool errors with the exact text and no structured
//! content, and invalid params (-32602) for malformed arguments.

mod common;

use serde_json::{json, Value};

/// The shared stdio harness, plus a `tools/call` shorthand.
struct Server(common::StdioServer);

impl Server {
    fn start(args: &[&str]) -> Server {
        Server(common::StdioServer::start(args, &[]))
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.0.request(id, method, params)
    }

    fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
    }
}

fn success(value: Value) -> Value {
    json!({"content": [{"type": "text", "text": value.to_string()}], "structuredContent": value, "isError": false})
}

fn failure(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

#[test]
fn lists_exactly_three_tools() {
    let mut s = Server::start(&[]);
    let listed = s.request(2, "tools/list", json!({}));
    let expected = json!({"tools": common::expected_tools()});
    assert_eq!(listed["result"], expected);
}

#[test]
fn calls_each_tool() {
    let mut s = Server::start(&["--catalog", "demo"]);
    assert_eq!(
        s.call(3, "search_api", json!({"query": "look up record"}))["result"]["structuredContent"]
            ["results"][0]["name"],
        "records.lookup"
    );
    assert_eq!(
        s.call(4, "search_api", json!({"query": "shipping quote"}))["result"],
        success(
            json!({"results": [{"name": "shipping.quote", "signature": "shipping.quote(*, weight_grams: int)", "summary": "Quote domestic shipping in cents."}], "truncated": false})
        )
    );
    assert_eq!(
        s.call(5, "describe_api", json!({"name": "shipping.quote"}))["result"],
        success(json!({
            "name": "shipping.quote",
            "signature": "shipping.quote(*, weight_grams: int)",
            "summary": "Quote domestic shipping in cents.",
            "description": "Prices a parcel of 1 to 5000 grams: 500 cents up to 1000 grams, else 900 cents.",
            "input": [{"name": "weight_grams", "type": "int", "required": true}],
            "output": [{"name": "price_cents", "type": "int", "required": true}]
        }))
    );
    assert_eq!(
        s.call(
            6,
            "execute",
            json!({"source": "def main():\n    return shipping.quote(weight_grams=1200)\n"})
        )["result"],
        success(json!({"result": {"price_cents": 900}}))
    );
}

#[test]
fn tool_errors_carry_the_exact_text() {
    let mut s = Server::start(&["--catalog", "demo", "--catalog", "conformance"]);
    assert_eq!(
        s.call(3, "describe_api", json!({"name": "conformance.hidden"}))["result"],
        failure("capability not found")
    );
    assert_eq!(
        s.call(4, "execute", json!({"source": "def main(:\n"}))["result"],
        failure("invalid program: <codemode>:1:11: got ':', want ')'")
    );
    assert_eq!(
        s.call(
            5,
            "execute",
            json!({"source": "def main():\n    return conformance.fail(public=False)\n"})
        )["result"],
        failure("capability failed")
    );
    assert_eq!(
        s.call(
            6,
            "execute",
            json!({"source": "def main():\n    return conformance.panic()\n"})
        )["result"],
        failure("capability failed")
    );
    assert_eq!(
        s.call(
            7,
            "execute",
            json!({"source": "def main():\n    return conformance.denied()\n"})
        )["result"],
        failure("permission denied")
    );
    assert_eq!(
        s.call(8, "search_api", json!({"query": "x".repeat(257)}))["result"],
        failure("resource limit exceeded")
    );
    // Still serving after the panic.
    assert_eq!(
        s.call(
            9,
            "execute",
            json!({"source": "def main():\n    return conformance.echo(value=\"ok\")\n"})
        )["result"],
        success(json!({"result": {"value": "ok"}}))
    );
}

#[test]
fn malformed_arguments_are_invalid_params() {
    let mut s = Server::start(&[]);
    let cases = [
        (
            json!({"name": "execute", "arguments": {"source": 1}}),
            "property \"source\" must be a string",
        ),
        (
            json!({"name": "execute", "arguments": {"source": "x", "extra": 1}}),
            "unexpected additional property \"extra\"",
        ),
        (
            json!({"name": "search_api", "arguments": {}}),
            "missing required property \"query\"",
        ),
        (
            json!({"name": "describe_api"}),
            "missing required property \"name\"",
        ),
        (
            json!({"name": "describe_api", "arguments": {"query": "x"}}),
            "unexpected additional property \"query\"",
        ),
        (
            json!({"name": "no_such_tool", "arguments": {}}),
            "unknown tool",
        ),
    ];
    for (i, (params, message)) in cases.into_iter().enumerate() {
        let response = s.request(10 + i as i64, "tools/call", params);
        assert_eq!(
            response["error"],
            json!({"code": -32602, "message": message}),
            "{response}"
        );
        assert!(response.get("result").is_none());
    }
}

/// A `tools/call` with a duplicate member is refused with the strict
/// parse's message before rmcp reads it, and the session goes on.
#[test]
fn a_duplicate_member_is_refused_and_the_session_goes_on() {
    let mut s = Server::start(&[]);
    for (id, line) in [
        (
            30,
            r#"{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"search_api","arguments":{"query":"a","query":"b"}}}"#,
        ),
        (
            31,
            r#"{"jsonrpc":"2.0","id":31,"method":"tools\/call","params":{"name":"execute","arguments":{"source":"x"},"_meta":{"k":1,"k":2}}}"#,
        ),
    ] {
        s.0.send_line(line);
        let response = s.0.response(id);
        let message = codemode_catalog::parse_strict(line)
            .expect_err("duplicate")
            .to_string();
        assert_eq!(
            response,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": message}})
        );
    }
    let found = s.call(32, "search_api", json!({"query": "quote"}));
    assert_eq!(found["result"]["isError"], false, "{found}");
}
