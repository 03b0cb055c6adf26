//! The `codemode` binary: `serve`, `run`, `search` and `describe` (see
//! [`codemode_server::cli`]). Logs go to stderr only, filtered by
//! `RUST_LOG` (default: warnings; rmcp never below info, since its debug
//! and trace events carry whole requests and results); a panicking
//! handler is logged without its payload and never reaches stdout. The
//! binary allocates through [`codemode_server::allocator`]: mimalloc
//! (under concurrent requests the system allocator's locking and
//! consolidation took a fifth of the server's CPU), with transparent huge
//! pages only for large blocks such as the chunks of a growing program
//! heap.

use clap::Parser;
use codemode_server::allocator;
use codemode_server::cli::{self, Cli};
use std::process::ExitCode;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::EnvFilter;

#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

fn main() -> ExitCode {
    allocator::limit_huge_pages();
    let cli = Cli::parse();
    let mut filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    // rmcp logs whole requests (arguments, source) and results at debug and
    // trace: never let it go below info.
    if filter.max_level_hint() > Some(LevelFilter::INFO) {
        if let Ok(cap) = "rmcp=info".parse() {
            filter = filter.add_directive(cap);
        }
    }
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    // Panic payloads may hold host details; log only where it happened.
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::debug!(at, "a task panicked");
    }));
    cli::main(cli)
}
