//! Duplicate members in tool calls are invalid params.
//!
//! JSON parsers disagree about `{"source": "a", "source": "b"}` (rmcp's
//! keeps the last), so codemode refuses such a document
//! (`docs/architecture.md`, section 1): a `tools/call` request with a
//! duplicate member anywhere is answered with the JSON-RPC invalid-params
//! error (-32602) naming the member, and never reaches the handler. rmcp
//! parses requests before the handler sees them, so the check runs on the
//! raw message first. On HTTP the one strict reading of a POST body finds
//! it (`crate::http::request`) and [`refusal`] makes the answer; on stdio
//! [`StrictLines`] reads the client's lines, keeps a refused line from
//! rmcp and hands the answer to [`StrictStdio`], the transport that writes
//! it. Messages that are not `tools/call` pass untouched.

use codemode_catalog::{parse_strict, JsonError};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// The ID of a message whose strict reading failed with `error`, when the
/// error is a duplicate member and the message (read as rmcp reads it, the
/// last of two members winning) is a `tools/call` request: the refusal's
/// ID, as the client wrote it. `None` for anything else.
pub(crate) fn refusal(text: &str, error: &JsonError) -> Option<Value> {
    let JsonError::DuplicateMember(_) = error else {
        return None;
    };
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("method")? != "tools/call" {
        return None;
    }
    value.get("id").cloned()
}

/// The refusal of one stdio line: the invalid-params error of a
/// `tools/call` request (one rmcp would take) with a duplicate member, or
/// `None` for any other line.
fn refused_line(line: &[u8]) -> Option<ServerJsonRpcMessage> {
    let text = std::str::from_utf8(line).ok()?;
    let error = parse_strict(text).err()?;
    refusal(text, &error)?;
    let message = serde_json::from_str::<ClientJsonRpcMessage>(text).ok()?;
    let (ClientRequest::CallToolRequest(_), id) = message.into_request()? else {
        return None;
    };
    Some(ServerJsonRpcMessage::error(
        ErrorData::invalid_params(error.to_string(), None),
        Some(id),
    ))
}

/// The longest line checked; a longer one passes unchecked (rmcp drops
/// lines over 16 MiB anyway).
const MAX_CHECKED_LINE: usize = 16 * 1024 * 1024;

/// Reads newline-delimited JSON-RPC messages from `inner` and checks each
/// complete line: a refused one ([`refused_line`]) is not handed on, its
/// refusal goes to `refusals` instead.
pub struct StrictLines<R> {
    inner: R,
    refusals: mpsc::UnboundedSender<ServerJsonRpcMessage>,
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
    /// Checks the lines of `inner`, sending the refusals to `refusals`.
    pub fn new(inner: R, refusals: mpsc::UnboundedSender<ServerJsonRpcMessage>) -> StrictLines<R> {
        StrictLines {
            inner,
            refusals,
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
            match refused_line(&line) {
                // Nobody to answer once the transport is gone.
                Some(refusal) => drop(self.refusals.send(refusal)),
                None => self.ready.extend(line),
            }
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

/// The stdio transport of [`StrictLines`]: rmcp's line transport over
/// the checked lines, which also writes the refusals of the lines kept
/// from rmcp.
pub struct StrictStdio<R: AsyncRead + Unpin, W: AsyncWrite> {
    inner: AsyncRwTransport<RoleServer, StrictLines<R>, W>,
    refusals: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
}

impl<R, W> StrictStdio<R, W>
where
    R: Send + AsyncRead + Unpin,
    W: Send + AsyncWrite + Unpin + 'static,
{
    /// A server transport reading `read` and writing `write`.
    pub fn new(read: R, write: W) -> StrictStdio<R, W> {
        let (sender, refusals) = mpsc::unbounded_channel();
        let lines = StrictLines::new(read, sender);
        StrictStdio {
            inner: AsyncRwTransport::new_server(lines, write),
            refusals,
        }
    }
}

impl<R, W> Transport<RoleServer> for StrictStdio<R, W>
where
    R: Send + AsyncRead + Unpin,
    W: Send + AsyncWrite + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            // rmcp's `receive` keeps a partly read line when it is dropped,
            // so a refusal is written as soon as its line was read.
            tokio::select! {
                biased;
                Some(refusal) = self.refusals.recv() => {
                    self.inner.send(refusal).await.ok()?;
                }
                message = self.inner.receive() => return message,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::AsyncReadExt;

    #[test]
    fn only_tools_calls_with_duplicates_are_refused() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute","arguments":{"source":"a","source":"b"}}}"#;
        let refused = serde_json::to_value(refused_line(call).expect("refused")).expect("json");
        assert_eq!(refused["id"], json!(7));
        assert_eq!(refused["error"]["code"], json!(-32602));
        let message = refused["error"]["message"].as_str().expect("text");
        assert_eq!(message, "duplicate member \"source\" at line 1 column 107");
        let fine = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute","arguments":{"source":"a"}}}"#;
        assert!(refused_line(fine).is_none());
        let other = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1,"a":2},"x":"tools/call"}"#;
        assert!(refused_line(other).is_none());
        // Escaped, the method is still `tools/call` to rmcp.
        let escaped = br#"{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{"name":"execute","arguments":{"source":"a","source":"b"}}}"#;
        assert!(refused_line(escaped).is_some());
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
        let (sender, mut refusals) = mpsc::unbounded_channel();
        let mut out = String::new();
        StrictLines::new(r, sender)
            .read_to_string(&mut out)
            .await
            .unwrap();
        // The refused line is kept from rmcp; its refusal is handed over.
        assert_eq!(
            out,
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\nrest"
        );
        let refusal = serde_json::to_value(refusals.recv().await.expect("a refusal")).unwrap();
        assert_eq!(refusal["id"], 1);
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("duplicate member \"query\""),
            "{message}"
        );
        assert!(refusals.recv().await.is_none());
    }
}
