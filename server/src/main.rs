//! The `codemode` binary: `serve`, `run`, `search` and `describe` (see
//! [`codemode_server::cli`]). Logs go to stderr only, filtered by
//! `RUST_LOG` (default: warnings); a panicking handler is logged without
//! its payload and never reaches stdout.

use clap::Parser;
use codemode_server::cli::{self, Cli};
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
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
