//! The command line of the `codemode` binary (clap derive) and what each
//! command does: `serve` speaks MCP on stdio or, with `--http`, on
//! Streamable HTTP; `run`, `search` and
//! `describe` do exactly what the tool does, in-process, and print the
//! structured result as one line of compact JSON (exit 0), or the exact
//! error text on stderr (exit 1). Bad usage — including an unreadable
//! program, config or manifest — exits 2.

use crate::catalogs;
use crate::config::{FileConfig, LimitsConfig};
use crate::http::{self, HttpOptions};
use crate::mcp;
use clap::{Args, Parser, Subcommand};
use codemode_catalog::{CancellationToken, CodeMode, Error, Subject};
use serde_json::{json, Value};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

/// Code mode for AI agents over MCP: search, describe and execute Starlark
/// over a capability catalog.
#[derive(Debug, Parser)]
#[command(name = "codemode", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on stdio, or on Streamable HTTP at http://ADDR/mcp.
    Serve {
        #[command(flatten)]
        common: Common,
        /// Serve stateless Streamable HTTP on this address (host:port)
        /// instead of stdio.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
    },
    /// Execute one program (a file, or '-' for stdin) and print its result.
    Run {
        #[command(flatten)]
        common: Common,
        /// The Starlark program file; '-' reads stdin.
        program: PathBuf,
    },
    /// Search the enabled capabilities.
    Search {
        #[command(flatten)]
        common: Common,
        /// The search query.
        query: String,
    },
    /// Describe one capability by its exact dotted name.
    Describe {
        #[command(flatten)]
        common: Common,
        /// The exact dotted capability name.
        name: String,
    },
}

/// Flags every command takes.
#[derive(Debug, Args)]
pub struct Common {
    /// A built-in catalog (demo, conformance) or a JSON manifest path;
    /// repeatable. Without any, the config's catalogs, else demo.
    #[arg(long = "catalog", value_name = "NAME|FILE")]
    pub catalogs: Vec<String>,
    /// A TOML configuration file (catalogs, disabled IDs, limits).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub limits: LimitsConfig,
}

/// Builds the service exactly as every command does: the config file, then
/// the flags over it.
pub fn build_service(common: &Common) -> Result<CodeMode, String> {
    build(common).map(|(service, _)| service)
}

/// The service and the configuration file it was built from.
fn build(common: &Common) -> Result<(CodeMode, FileConfig), String> {
    let file = match &common.config {
        Some(path) => FileConfig::read(path).map_err(|e| e.to_string())?,
        None => FileConfig::default(),
    };
    let sources = if !common.catalogs.is_empty() {
        common.catalogs.clone()
    } else {
        file.catalogs
            .clone()
            .unwrap_or_else(|| vec!["demo".to_string()])
    };
    let config = file.limits.overridden_by(&common.limits).to_config();
    let service = catalogs::load(&sources, &file.disabled, config).map_err(|e| e.to_string())?;
    Ok((service, file))
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("codemode: {message}");
    ExitCode::from(2)
}

/// Runs a parsed command line.
pub fn main(cli: Cli) -> ExitCode {
    let common = match &cli.command {
        Command::Serve { common, .. }
        | Command::Run { common, .. }
        | Command::Search { common, .. }
        | Command::Describe { common, .. } => common,
    };
    let (service, file) = match build(common) {
        Ok(built) => built,
        Err(e) => return usage_error(&e),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("codemode: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let subject = Subject::new("local");
    let outcome: Result<Value, Error> = match &cli.command {
        Command::Serve {
            http: Some(addr), ..
        } => {
            let options = match HttpOptions::from_config(&file.http) {
                Ok(o) => o,
                Err(e) => return usage_error(&e),
            };
            return match runtime.block_on(http::serve_http(service, addr, &options)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("codemode: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        Command::Serve { http: None, .. } => {
            return match runtime.block_on(mcp::serve_stdio(service)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("serve failed: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        Command::Run { program, .. } => {
            let source = match read_program(program) {
                Ok(s) => s,
                Err(e) => return usage_error(&e),
            };
            runtime.block_on(async {
                let data = service
                    .execute(&subject, &source, CancellationToken::new())
                    .await?;
                let result = serde_json::to_value(data).map_err(|_| Error::Internal)?;
                Ok(json!({ "result": result }))
            })
        }
        Command::Search { query, .. } => runtime.block_on(async {
            let found = service.search(&subject, query).await?;
            serde_json::to_value(found).map_err(|_| Error::Internal)
        }),
        Command::Describe { name, .. } => runtime.block_on(async {
            let described = service.describe(&subject, name).await?;
            serde_json::to_value(described).map_err(|_| Error::Internal)
        }),
    };
    match outcome {
        Ok(value) => {
            println!("{value}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

fn read_program(path: &PathBuf) -> Result<String, String> {
    if path.as_os_str() == "-" {
        let mut source = String::new();
        std::io::stdin()
            .read_to_string(&mut source)
            .map_err(|e| format!("cannot read the program from stdin: {e}"))?;
        Ok(source)
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read program {}: {e}", path.display()))
    }
}
