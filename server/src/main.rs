//! The `codemode` binary: `serve`, `run`, `search` and `describe` (see
//! [`codemode_server::Cli`]). Logs go to stderr only, filtered by
//! `RUST_LOG` (default: warnings; rmcp never below info, since its debug
//! and trace events carry whole requests and results, whatever the
//! directives say — see [`codemode_server::init_logging_to`]). The service logs a
//! handler's private error and a caught panic's payload with the
//! capability's ID (never its arguments); nothing of them reaches stdout.
//! `run`, `search` and `describe` hold their log lines back until the
//! command has printed its outcome, so that a tool error stays the first
//! line of stderr. The binary allocates through
//! [`codemode_server::Allocator`]: mimalloc (under concurrent requests the
//! system allocator's locking and consolidation took a fifth of the
//! server's CPU), with transparent huge pages only for large blocks such
//! as the chunks of a growing program heap.

use clap::Parser;
use codemode_server::{Allocator, Cli, Command};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Mutex;

#[global_allocator]
static ALLOCATOR: Allocator = Allocator;

fn main() -> ExitCode {
    codemode_server::limit_huge_pages();
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve { .. }) {
        hold_logs_back();
    }
    codemode_server::init_logging_to(|| LogWriter);
    // The service logs a caught handler panic's payload with the
    // capability's ID; the hook adds only where it happened.
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::debug!(at, "a task panicked");
    }));
    let code = codemode_server::run_cli(cli);
    release_logs();
    code
}

/// Log lines held back while a one-shot command runs; `None` writes them
/// to stderr at once.
static HELD: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// The most log bytes held back.
const MAX_HELD_BYTES: usize = 1 << 20;

fn hold_logs_back() {
    if let Ok(mut held) = HELD.lock() {
        *held = Some(Vec::new());
    }
}

/// Writes the held lines to stderr and stops holding.
fn release_logs() {
    let held = HELD.lock().ok().and_then(|mut h| h.take());
    if let Some(lines) = held {
        let _ = std::io::stderr().write_all(&lines);
    }
}

/// Writes log lines to stderr, or holds them back.
struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut held) = HELD.lock() {
            if let Some(lines) = held.as_mut() {
                // Bounded: beyond 1 MiB, later lines are dropped.
                if lines.len() + buf.len() <= MAX_HELD_BYTES {
                    lines.extend_from_slice(buf);
                }
                return Ok(buf.len());
            }
        }
        std::io::stderr().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
