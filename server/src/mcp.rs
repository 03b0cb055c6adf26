//! The MCP adapter: the CodeMode service as exactly three tools
//! (`search_api`, `describe_api`, `execute`, see [`Tool`]) on an rmcp
//! [`ServerHandler`].
//!
//! Every call is validated once ([`ToolCall::new`]) before the subject is
//! resolved: an unknown tool or ill-formed arguments are a JSON-RPC
//! invalid-params error (-32602). A success is `structuredContent` plus one
//! text item with the same JSON; a failure is `isError: true` with one text
//! item holding the exact error text and no `structuredContent`. Each call
//! gets a tracing span `tool_call` with the tool name, outcome and duration
//! in microseconds — never arguments, source or results — and, when the
//! handler has [`Metrics`], is counted and timed there by tool and outcome.
//! A call a policy marks *ask* is put to the host's approver when it
//! plugged one ([`CodeModeServer::with_approver`]), else — on a transport
//! with sessions (stdio) — to the person behind the client through
//! `elicitation/create` ([`crate::approval::Elicitation`]); on stateless
//! HTTP nobody can be asked and it is refused. The server's name and
//! version (`serverInfo`) are settable ([`CodeModeServer::with_server_info`]).
//! A panic while a call is served (subject resolution, search, describe,
//! execution) is caught: the call answers `internal failure` and the panic
//! is logged locally.
//! The `initialize` result carries [`INSTRUCTIONS`]: the workflow and the
//! Python constructs the language lacks. An `execute` whose request carries
//! `_meta.progressToken` sends `notifications/progress` after each
//! capability call that returned its result (`progress`: calls completed,
//! `message`: the capability's dotted name, never arguments or results);
//! over stateless HTTP rmcp then answers with an event stream instead of a
//! plain JSON response.

use crate::approval::Elicitation;
use crate::telemetry::{error_outcome, Metrics};
use crate::tool::{Invalid, Tool, ToolCall};
use codemode_catalog::{
    Approver, CallDone, CancellationToken, CodeMode, Error, ExecuteOptions, Progress,
    ProgressFuture, RefuseAll, Subject, SubjectResolver,
};
use futures_util::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ServerCapabilities,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

/// The `instructions` of the `initialize` result: the workflow and what
/// Python habits fail, in at most 1,000 bytes.
pub const INSTRUCTIONS: &str = "\
Code mode over a catalog of capabilities, in three steps:
1. search_api with task or resource words finds capabilities.
2. describe_api with an exact returned name gives the signature and the input and output fields.
3. execute runs one Starlark program that defines def main(): with no parameters. Inside main, \
call capabilities by dotted name with keyword arguments only, e.g. records.lookup(key=\"a\", limit=2), \
and compose many calls with loops and data shaping. Only main's return value comes back; print is discarded.
Starlark is not Python: there is no import (json and math are predeclared), no try/except/raise \
(check first, fail(msg) to stop), no f-strings (\"{}\".format(x) or \"%s\" % x), no while \
(for i in range(n) with break), no class, with, yield, is, ** or sets; read dict entries with \
d[\"k\"] or d.get(\"k\"), not d.k. An invalid program error names the line and column and often a hint.";

/// The tools as `tools/list` returns them.
pub fn tools() -> Vec<rmcp::model::Tool> {
    Tool::ALL.map(|t| t.definition().clone()).to_vec()
}

/// Resolves the trusted subject of an MCP request.
pub type Resolver = Arc<dyn SubjectResolver<RequestContext<RoleServer>>>;

/// The rmcp handler over a CodeMode service.
#[derive(Clone)]
pub struct CodeModeServer {
    service: CodeMode,
    resolver: Resolver,
    metrics: Option<Metrics>,
    /// The host's approver, which replaces asking the client.
    approver: Option<Arc<dyn Approver>>,
    /// Whether the transport has sessions whose client can be asked.
    elicitation: bool,
    /// `serverInfo`: name and version.
    name: String,
    version: String,
}

impl CodeModeServer {
    /// A handler for `service` whose requests resolve through `resolver`.
    /// It asks nobody ([`CodeModeServer::with_elicitation`] turns asking
    /// the client on) and is `codemode` in the binary's version.
    pub fn new(service: CodeMode, resolver: Resolver) -> CodeModeServer {
        CodeModeServer {
            service,
            resolver,
            metrics: None,
            approver: None,
            elicitation: false,
            name: "codemode".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    /// This handler, asking the client of a request (`elicitation/create`)
    /// when a call needs approval: for transports with sessions.
    pub fn with_elicitation(mut self, yes: bool) -> CodeModeServer {
        self.elicitation = yes;
        self
    }

    /// This handler, putting every call that needs approval to `approver`
    /// (instead of the client).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> CodeModeServer {
        self.approver = Some(approver);
        self
    }

    /// This handler, naming itself `name` `version` in `serverInfo`.
    pub fn with_server_info(
        mut self,
        name: impl Into<String>,
        version: impl Into<String>,
    ) -> CodeModeServer {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// The approver of a request whose session is `peer` (if any).
    fn approver_for(&self, peer: Option<&rmcp::Peer<RoleServer>>) -> Arc<dyn Approver> {
        match (&self.approver, peer) {
            (Some(approver), _) => approver.clone(),
            (None, Some(peer)) if self.elicitation => Arc::new(Elicitation::new(peer.clone())),
            _ => Arc::new(RefuseAll),
        }
    }

    /// This handler, counting and timing its calls in `metrics`.
    pub fn with_metrics(mut self, metrics: Metrics) -> CodeModeServer {
        metrics.watch(&self.service);
        self.metrics = Some(metrics);
        self
    }

    /// Ends the span of a call and records it in the metrics.
    fn finish(&self, span: &tracing::Span, tool: &str, outcome: &'static str, started: Instant) {
        let elapsed = started.elapsed();
        span.record("outcome", outcome);
        span.record("duration_us", elapsed.as_micros() as u64);
        tracing::info!(parent: span, "tool call finished");
        if let Some(metrics) = &self.metrics {
            metrics.record(tool, outcome, elapsed);
        }
    }

    /// A handler with one fixed subject for every request that asks the
    /// client for approvals (stdio).
    pub fn local(service: CodeMode) -> CodeModeServer {
        let subject = codemode_catalog::FixedSubject(Subject::new("local"));
        CodeModeServer::new(service, Arc::new(subject)).with_elicitation(true)
    }

    async fn dispatch(
        &self,
        tool: Tool,
        argument: &str,
        subject: &Subject,
        cancel: &CancellationToken,
        approver: Arc<dyn Approver>,
        progress: Option<Arc<dyn Progress>>,
    ) -> Result<Value, Error> {
        match tool {
            Tool::SearchApi => {
                let found = self.service.search(subject, argument).await?;
                serde_json::to_value(found).map_err(|_| Error::Internal)
            }
            Tool::DescribeApi => {
                let described = self.service.describe(subject, argument).await?;
                serde_json::to_value(described).map_err(|_| Error::Internal)
            }
            Tool::Execute => {
                let data = self
                    .service
                    .execute(
                        subject,
                        argument,
                        ExecuteOptions::cancelled_by(cancel.clone())
                            .approver(approver)
                            .progress(progress),
                    )
                    .await?;
                let result = serde_json::to_value(data).map_err(|_| Error::Internal)?;
                Ok(json!({ "result": result }))
            }
        }
    }
}

impl ServerHandler for CodeModeServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(&self.name, &self.version))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        Tool::from_name(name).map(|t| t.definition().clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let resolve = || self.resolver.resolve(&context);
        let approver = self.approver_for(Some(&context.peer));
        let progress = context.meta.get_progress_token().map(|token| {
            Arc::new(PeerProgress {
                token,
                peer: context.peer.clone(),
            }) as Arc<dyn Progress>
        });
        let call = ToolCall::new(&request.name, request.arguments);
        self.call_observed(call, resolve, &context.ct, approver, progress)
            .await
            .map(Into::into)
    }
}

/// Sends `notifications/progress` for the request that carried `token`:
/// `progress` is the number of capability calls completed, `message` the
/// name of the one that just completed.
struct PeerProgress {
    token: ProgressToken,
    peer: Peer<RoleServer>,
}

impl Progress for PeerProgress {
    fn call_done(&self, done: CallDone<'_>) -> ProgressFuture {
        let param = ProgressNotificationParam::new(self.token.clone(), done.calls as f64)
            .with_message(done.name);
        let peer = self.peer.clone();
        Box::pin(async move {
            // A client that went away hears nothing; the program goes on
            // until its own cancellation stops it.
            let _ = peer.notify_progress(param).await;
        })
    }
}

impl CodeModeServer {
    /// One validated tool call, whatever the transport ([`ToolCall::new`]
    /// validated it before `resolve` gives the subject): serves the tool
    /// and records the span and metrics. An invalid call is a JSON-RPC
    /// error; every other outcome is a tool result.
    pub(crate) async fn call(
        &self,
        call: Result<ToolCall, Invalid>,
        resolve: impl FnOnce() -> Result<Subject, codemode_catalog::Unauthenticated>,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, McpError> {
        let approver = self.approver_for(None);
        self.call_observed(call, resolve, cancel, approver, None)
            .await
    }

    /// [`CodeModeServer::call`] with the approver of its session, telling
    /// `progress` of each completed capability call of an `execute`.
    async fn call_observed(
        &self,
        call: Result<ToolCall, Invalid>,
        resolve: impl FnOnce() -> Result<Subject, codemode_catalog::Unauthenticated>,
        cancel: &CancellationToken,
        approver: Arc<dyn Approver>,
        progress: Option<Arc<dyn Progress>>,
    ) -> Result<CallToolResult, McpError> {
        let started = Instant::now();
        let ToolCall { tool, argument } = match call {
            Ok(call) => call,
            Err(Invalid {
                tool: Some(tool),
                message,
            }) => {
                let span = tool_span(tool.name());
                self.finish(&span, tool.name(), "invalid_params", started);
                return Err(McpError::invalid_params(message, None));
            }
            Err(Invalid {
                tool: None,
                message,
            }) => {
                // The name is the client's: neither logged nor used as a label.
                let span = tool_span("unknown");
                self.finish(&span, "unknown", "invalid_params", started);
                return Err(McpError::invalid_params(message, None));
            }
        };
        let span = tool_span(tool.name());
        let outcome = async {
            let subject = resolve().map_err(|_| Error::Unauthenticated)?;
            self.dispatch(tool, &argument, &subject, cancel, approver, progress)
                .await
        };
        // A panic anywhere in resolution, search, describe or around the
        // interpreter is this call's `internal failure`, logged here
        // without its payload (which may hold host details).
        let outcome = AssertUnwindSafe(outcome)
            .catch_unwind()
            .instrument(span.clone())
            .await
            .unwrap_or_else(|_| {
                tracing::error!(parent: &span, tool = tool.name(), "the tool call panicked");
                Err(Error::Internal)
            });
        Ok(match outcome {
            Ok(value) => {
                self.finish(&span, tool.name(), "ok", started);
                CallToolResult::structured(value)
            }
            Err(e) => {
                self.finish(&span, tool.name(), error_outcome(&e), started);
                CallToolResult::error(vec![ContentBlock::text(e.to_string())])
            }
        })
    }
}

/// The span of one tool call: its tool, outcome and duration.
fn tool_span(tool: &str) -> tracing::Span {
    tracing::info_span!(
        "tool_call",
        tool,
        outcome = tracing::field::Empty,
        duration_us = tracing::field::Empty
    )
}

/// Serves `service` over stdio with the fixed local subject until the
/// client closes the stream.
pub async fn serve_stdio(service: CodeMode) -> Result<(), Box<dyn std::error::Error>> {
    serve_stdio_with(CodeModeServer::local(service)).await
}

/// Serves `server` (as the host set it up: subject, approver, metrics,
/// `serverInfo`) over stdio until the client closes the stream.
pub async fn serve_stdio_with(server: CodeModeServer) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::ServiceExt;
    let (stdin, stdout) = rmcp::transport::stdio();
    let transport = crate::strict::StrictStdio::new(stdin, stdout);
    let running = server.serve(transport).await?;
    running.waiting().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use codemode_catalog::Unauthenticated;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// Counts resolutions and resolves to `subject` (empty: fails;
    /// `PANIC`: panics).
    struct Counting(Arc<AtomicUsize>, &'static str);

    const PANIC: &str = "panic!";

    impl SubjectResolver<RequestContext<RoleServer>> for Counting {
        fn resolve(&self, _: &RequestContext<RoleServer>) -> Result<Subject, Unauthenticated> {
            self.0.fetch_add(1, Ordering::SeqCst);
            match self.1 {
                "" => Err(Unauthenticated),
                PANIC => panic!("the resolver failed"),
                id => Ok(Subject::new(id)),
            }
        }
    }

    /// Serves over an in-memory pipe and returns the response to each
    /// request (sent one at a time) and the number of resolutions.
    async fn exchange(subject: &'static str, calls: &[Value]) -> (Vec<Value>, usize) {
        use rmcp::ServiceExt;
        let count = Arc::new(AtomicUsize::new(0));
        let service =
            crate::catalogs::load(&["demo".into()], &[], Default::default()).expect("demo loads");
        let server = CodeModeServer::new(service, Arc::new(Counting(count.clone(), subject)));
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_end);
        tokio::spawn(async move {
            if let Ok(running) = server.serve((server_read, server_write)).await {
                let _ = running.waiting().await;
            }
        });
        let (read, mut write) = tokio::io::split(client);
        let mut lines = BufReader::new(read).lines();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let mut responses = Vec::new();
        for (i, message) in [init, initialized].iter().chain(calls).enumerate() {
            let mut message = message.clone();
            if i >= 2 {
                message =
                    json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": message});
            }
            let line = format!("{message}\n");
            write.write_all(line.as_bytes()).await.expect("write");
            if i == 1 {
                continue;
            }
            let response = lines.next_line().await.expect("read").expect("a line");
            if i >= 2 {
                responses.push(serde_json::from_str(&response).expect("json"));
            }
        }
        (responses, count.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn invalid_arguments_never_reach_the_resolver() {
        let calls = [
            json!({"name": "execute", "arguments": {"source": 1}}),
            json!({"name": "search_api", "arguments": {"query": "x", "more": true}}),
            json!({"name": "describe_api"}),
        ];
        let (responses, resolutions) = exchange("alice", &calls).await;
        for r in &responses {
            assert_eq!(r["error"]["code"], -32602, "{r}");
        }
        assert_eq!(resolutions, 0);
        let (responses, resolutions) = exchange(
            "alice",
            &[json!({"name": "search_api", "arguments": {"query": "quote"}})],
        )
        .await;
        assert_eq!(responses[0]["result"]["isError"], false);
        assert_eq!(resolutions, 1);
    }

    #[tokio::test]
    async fn a_failing_resolver_is_unauthenticated() {
        let calls = [
            json!({"name": "search_api", "arguments": {"query": "quote"}}),
            json!({"name": "execute", "arguments": {"source": "def main():\n    return 1\n"}}),
        ];
        let (responses, resolutions) = exchange("", &calls).await;
        for r in &responses {
            assert_eq!(
                r["result"],
                json!({"content": [{"type": "text", "text": "unauthenticated"}], "isError": true})
            );
        }
        assert_eq!(resolutions, 2);
    }

    #[tokio::test]
    async fn a_panic_is_an_internal_failure() {
        let calls = [
            json!({"name": "search_api", "arguments": {"query": "quote"}}),
            json!({"name": "describe_api", "arguments": {"name": "shipping.quote"}}),
            json!({"name": "execute", "arguments": {"source": "def main():\n    return 1\n"}}),
        ];
        let (responses, resolutions) = exchange(PANIC, &calls).await;
        assert_eq!(responses.len(), 3);
        for r in &responses {
            assert_eq!(
                r["result"],
                json!({"content": [{"type": "text", "text": "internal failure"}], "isError": true})
            );
        }
        assert_eq!(resolutions, 3);
    }

    #[tokio::test]
    async fn a_panic_on_the_plain_call_path_is_an_internal_failure() {
        let service =
            crate::catalogs::load(&["demo".into()], &[], Default::default()).expect("demo loads");
        let server = CodeModeServer::local(service);
        for (tool, argument) in [
            (Tool::SearchApi, "quote"),
            (Tool::DescribeApi, "shipping.quote"),
            (Tool::Execute, "def main():\n    return 1\n"),
        ] {
            let call = Ok(ToolCall {
                tool,
                argument: argument.into(),
            });
            let resolve = || -> Result<Subject, Unauthenticated> { panic!("resolver") };
            let result = server
                .call(call, resolve, &CancellationToken::new())
                .await
                .expect("a tool result");
            assert_eq!(result.is_error, Some(true), "{tool:?}");
            let text = serde_json::to_value(&result.content).expect("json");
            assert_eq!(text, json!([{"type": "text", "text": "internal failure"}]));
        }
    }
}
