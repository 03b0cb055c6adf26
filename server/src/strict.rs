//! Duplicate members in tool calls are invalid params.
//!
//! JSON parsers disagree about `{"source": "a", "source": "b"}` (rmcp's
//! keeps the last), so codemode refuses such a document
//! (`docs/architecture.md`, section 1). rmcp
//! parses requests before the handler sees them, so the check runs on the
//! raw message first: on stdio, [`StrictLines`] reads the client's lines and
//! replaces the arguments of a `tools/call` request that has a duplicate
//! member anywhere with a marker that [`crate::mcp::validate`] turns into
//! the JSON-RPC invalid-params error (-32602) naming the member; on HTTP,
//! `refuse_duplicates` answers such a POST with that error itself.
//! Messages that are not `tools/call` pass untouched.

use crate::http::connection::collect as read_body;
use crate::http::Hosts;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use codemode_catalog::{parse_strict, JsonError};
use serde_json::{json, Value};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// The argument key that carries a duplicate-member message to
/// [`crate::mcp::validate`] (a NUL byte first: no tool has such a
/// property).
pub const DUPLICATE_MARKER: &str = "\u{0}duplicate member";

/// The ID and the invalid-params message of a `tools/call` request with a
/// duplicate member, or `None` for any other message.
pub fn duplicate_member(message: &[u8]) -> Option<(Value, String)> {
    memchr::memmem::find(message, b"tools/call")?;
    let text = std::str::from_utf8(message).ok()?;
    let Err(JsonError::DuplicateMember(error)) = parse_strict(text) else {
        return None;
    };
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("method")? != "tools/call" {
        return None;
    }
    Some((value.get("id")?.clone(), error))
}

/// A line of the client with the arguments of a duplicate-bearing
/// `tools/call` replaced by the marker; any other line unchanged.
fn checked_line(line: Vec<u8>) -> Vec<u8> {
    let Some((_, message)) = duplicate_member(&line) else {
        return line;
    };
    let Ok(mut value) = serde_json::from_slice::<Value>(&line) else {
        return line;
    };
    if let Some(params) = value.get_mut("params").and_then(Value::as_object_mut) {
        params.insert("arguments".into(), json!({ DUPLICATE_MARKER: message }));
    }
    let mut out = serde_json::to_vec(&value).unwrap_or(line);
    out.push(b'\n');
    out
}

/// The longest line checked; a longer one passes unchecked (rmcp drops
/// lines over 16 MiB anyway).
const MAX_CHECKED_LINE: usize = 16 * 1024 * 1024;

/// Reads newline-delimited JSON-RPC messages from `inner` and checks each
/// complete line with [`duplicate_member`].
pub struct StrictLines<R> {
    inner: R,
    /// Bytes of the line being read.
    pending: Vec<u8>,
    /// How much of `pending` is known to hold no newline.
    scanned: usize,
    /// Checked bytes not yet handed out, from `offset`.
    ready: Vec<u8>,
    offset: usize,
    eof: bool,
}

impl<R> StrictLines<R> {
    /// Checks the lines of `inner`.
    pub fn new(inner: R) -> StrictLines<R> {
        StrictLines {
            inner,
            pending: Vec::new(),
            scanned: 0,
            ready: Vec::new(),
            offset: 0,
            eof: false,
        }
    }

    /// Moves every complete line of `pending` to `ready`, checked.
    fn take_lines(&mut self) {
        while let Some(i) = memchr::memchr(b'\n', &self.pending[self.scanned..]) {
            let end = self.scanned + i + 1;
            let rest = self.pending.split_off(end);
            let line = std::mem::replace(&mut self.pending, rest);
            self.ready.extend(checked_line(line));
            self.scanned = 0;
        }
        self.scanned = self.pending.len();
        if self.pending.len() > MAX_CHECKED_LINE || (self.eof && !self.pending.is_empty()) {
            self.ready.append(&mut self.pending);
            self.scanned = 0;
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for StrictLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.offset < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.offset);
                buf.put_slice(&this.ready[this.offset..this.offset + n]);
                this.offset += n;
                if this.offset == this.ready.len() {
                    this.ready.clear();
                    this.offset = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 8192];
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {
                    let filled = read.filled();
                    if filled.is_empty() {
                        this.eof = true;
                    } else {
                        this.pending.extend_from_slice(filled);
                    }
                    this.take_lines();
                }
            }
        }
    }
}

/// Answers a POST whose body is a `tools/call` with a duplicate member
/// with the invalid-params error (for allowed hosts; rmcp refuses the
/// others); passes everything else on with the body as it came.
pub(crate) async fn refuse_duplicates(
    State((hosts, max_body)): State<(Arc<Hosts>, usize)>,
    request: Request,
    next: Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok());
    if request.method() != Method::POST || !hosts.allows(host) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body, max_body).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    if let Some((id, message)) = duplicate_member(&bytes) {
        let error = json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32602, "message": message}});
        let mut response = Response::new(Body::from(error.to_string()));
        *response.status_mut() = StatusCode::OK;
        let json = header::HeaderValue::from_static("application/json");
        response.headers_mut().insert(header::CONTENT_TYPE, json);
        return response;
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn only_tools_calls_with_duplicates_are_caught() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute","arguments":{"source":"a","source":"b"}}}"#;
        let (id, message) = duplicate_member(call).expect("caught");
        assert_eq!(id, json!(7));
        assert!(
            message.starts_with("duplicate member \"source\""),
            "{message}"
        );
        let fine = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute","arguments":{"source":"a"}}}"#;
        assert_eq!(duplicate_member(fine), None);
        let other = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1,"a":2},"x":"tools/call"}"#;
        assert_eq!(duplicate_member(other), None);
    }

    #[tokio::test]
    async fn lines_are_checked_across_reads() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_api","arguments":{"query":"a","query":"b"}}}"#;
        let input = format!("{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}}\n{call}\nrest");
        // One byte at a time, through a reader that splits every read.
        let (mut w, r) = tokio::io::duplex(1);
        let bytes = input.into_bytes();
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            w.write_all(&bytes).await.unwrap();
        });
        let mut out = String::new();
        StrictLines::new(r).read_to_string(&mut out).await.unwrap();
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#);
        let rewritten: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(rewritten["params"]["name"], "search_api");
        let marker = &rewritten["params"]["arguments"][DUPLICATE_MARKER];
        assert!(marker
            .as_str()
            .unwrap()
            .starts_with("duplicate member \"query\""));
        assert_eq!(lines[2], "rest");
    }
}
