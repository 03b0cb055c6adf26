//! The command line of the `codemode` binary (clap derive) and what each
//! command does: `serve` speaks MCP on stdio or, with `--http`, on
//! Streamable HTTP; `run`, `search` and
//! `describe` do exactly what the tool does, in-process, and print the
//! structured result as one line of compact JSON (exit 0), or the exact
//! error text on stderr (exit 1). Bad usage — including an unreadable
//! program, config or manifest — exits 2. Every command builds the same
//! catalog, upstream MCP servers (`--upstream`, `[[upstream]]`) and
//! OpenAPI documents (`--openapi`, `[[openapi]]`) included: upstreams are
//! connected before the command runs and shut down before its result is
//! printed; documents are read and imported before the command runs.

use crate::approval::UnknownAskEntry;
use crate::catalogs;
use crate::config::{ConfigError, FileConfig, LimitsConfig, PolicyConfigError};
use crate::drain;
use crate::http::{self, HttpOptions};
use crate::import_policy;
use crate::mcp;
use crate::openapi;
use crate::telemetry::Metrics;
use crate::upstream::{self, Upstreams};
use clap::{Args, Parser, Subcommand};
use codemode_catalog::{BuildError, CodeMode, Config, Error, ExecuteOptions, Policy, Subject};
use serde_json::{json, Value};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
// The fields' doc comments are the `--help` text, where `NAME.<tool>` is
// meant literally, not as HTML.
#[allow(rustdoc::invalid_html_tags)]
#[derive(Debug, Args)]
pub struct Common {
    /// A built-in catalog (demo, conformance) or a JSON manifest path;
    /// repeatable. Without any, the config's catalogs, else demo.
    #[arg(long = "catalog", value_name = "NAME|FILE")]
    pub catalogs: Vec<String>,
    /// A TOML configuration file (catalogs, disabled IDs, limits, Rego
    /// policy, HTTP hosts, origins and tokens, telemetry).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// An upstream MCP server whose tools become capabilities NAME.<tool>:
    /// NAME=COMMAND (a stdio child process; the command is split like a
    /// shell would, without one) or NAME=URL (Streamable HTTP); repeatable.
    #[arg(long = "upstream", value_name = "NAME=COMMAND|URL")]
    pub upstreams: Vec<String>,
    /// An OpenAPI 3.0/3.1 document (a file or an http(s) URL, JSON or
    /// YAML) whose operations become capabilities NAME.<operation>, called
    /// at the document's first server URL; repeatable.
    #[arg(long = "openapi", value_name = "NAME=SPEC")]
    pub openapi: Vec<String>,
    #[command(flatten)]
    pub limits: LimitsConfig,
}

/// Why the service cannot be built from the configuration file and the
/// flags (a usage error: exit status 2). The text is the source's own.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Catalogs(#[from] catalogs::LoadError),
    #[error(transparent)]
    Policy(#[from] PolicyConfigError),
    #[error(transparent)]
    Approval(#[from] UnknownAskEntry),
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Upstream(#[from] upstream::UpstreamError),
    #[error(transparent)]
    OpenApi(#[from] openapi::OpenApiError),
    #[error(transparent)]
    Start(#[from] upstream::StartError),
}

/// Builds the service exactly as every command does: the config file, then
/// the flags over it — without upstream servers and OpenAPI documents,
/// which need a runtime to connect (see [`main`]).
pub fn build_service(common: &Common) -> Result<CodeMode, SetupError> {
    let (parts, config, file) = sources(common)?;
    check_ask(&file, &parts.capabilities, &[])?;
    let catalog = parts.build_with([])?;
    Ok(CodeMode::with_config(catalog, parts.policy, config))
}

/// The service with its upstream servers connected, the running
/// supervisors and the configuration file it was built from.
fn build(
    common: &Common,
    runtime: &tokio::runtime::Runtime,
) -> Result<(CodeMode, Upstreams, FileConfig), SetupError> {
    let (mut parts, config, file) = sources(common)?;
    let upstreams = upstream::collect(&file.upstream, &common.upstreams, &openapi::process_env)?;
    let documents = openapi::collect(&file.openapi, &common.openapi, &openapi::process_env)
        .map_err(openapi::OpenApiError::from)?;
    let native = parts.capabilities.iter().map(|c| c.name());
    let imported = runtime.block_on(openapi::load(
        &documents,
        config.limits.max_value_bytes,
        native,
    ))?;
    parts
        .capabilities
        .extend(imported.into_iter().map(|i| i.capability));
    check_ask(&file, &parts.capabilities, &upstreams)?;
    let (service, running) = runtime.block_on(upstream::start(parts, upstreams, config))?;
    Ok((service, running, file))
}

/// Refuses an `[approval] ask` entry that names no annotation and no
/// capability ID: of `capabilities` (disabled ones included), or under one
/// of `upstreams` (`upstream.NAME.TOOL`: its tools are listed only once it
/// is connected, and may change).
fn check_ask(
    file: &FileConfig,
    capabilities: &[codemode_catalog::Capability],
    upstreams: &[upstream::Upstream],
) -> Result<(), SetupError> {
    if file.approval.ask.is_empty() {
        return Ok(());
    }
    let catalog = codemode_catalog::Catalog::builder()
        .capabilities(capabilities.iter().cloned())
        .build()?;
    let ids: std::collections::HashSet<String> = catalog
        .names()
        .filter_map(|n| catalog.get(n))
        .map(|c| c.id().as_str().to_string())
        .collect();
    file.approval.check(&|id| {
        ids.contains(id)
            || upstreams.iter().any(|u| {
                id.strip_prefix("upstream.")
                    .and_then(|rest| rest.strip_prefix(u.name.as_str()))
                    .and_then(|rest| rest.strip_prefix('.'))
                    .is_some_and(|tool| !tool.is_empty())
            })
    })?;
    Ok(())
}

/// The native sources, the service config and the configuration file.
fn sources(common: &Common) -> Result<(catalogs::Sources, Config, FileConfig), SetupError> {
    let file = match &common.config {
        Some(path) => FileConfig::read(path)?,
        None => FileConfig::default(),
    };
    let sources = if !common.catalogs.is_empty() {
        common.catalogs.clone()
    } else {
        file.catalogs
            .clone()
            .unwrap_or_else(|| vec!["demo".to_string()])
    };
    let mut config = file.limits.overridden_by(&common.limits).to_config();
    let mut parts = catalogs::sources(&sources, &file.disabled)?;
    if let Some(rego) = file
        .policy
        .as_ref()
        .map(|p| p.load())
        .transpose()?
        .flatten()
    {
        let rego: Arc<dyn Policy> = Arc::new(rego);
        parts.policy = catalogs::all_of(vec![parts.policy, rego]);
    }
    let ask = file.approval.policy();
    if !ask.is_empty() {
        parts.policy = catalogs::all_of(vec![parts.policy, Arc::new(ask)]);
    }
    if let Some(ms) = file.approval.timeout_ms {
        config.approval_timeout = std::time::Duration::from_millis(ms);
    }
    Ok((parts, config, file))
}

/// With `[telemetry] listen`: binds it and serves the metrics there (on
/// the runtime, through the hardened listener with the `[http]` limits),
/// behind the `[http]` hosts (and any IP address) and, unless
/// `listen_requires_token = false`, tokens. A non-loopback address whose
/// metrics need no token is refused unless `allow_public_listen = true`.
fn serve_metrics(
    runtime: &tokio::runtime::Runtime,
    file: &FileConfig,
) -> Result<Option<Metrics>, String> {
    let Some(addr) = &file.telemetry.listen else {
        return Ok(None);
    };
    let options =
        http::metrics_listener_options(&file.http, &file.telemetry).map_err(|e| e.to_string())?;
    let listener = runtime
        .block_on(http::bind(addr))
        .map_err(|e| format!("cannot listen on {addr} for metrics: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr} for metrics: {e}"))?;
    http::check_metrics_address(local, &options, &file.telemetry).map_err(|e| e.to_string())?;
    eprintln!("codemode: metrics on http://{local}/metrics");
    let metrics = Metrics::new();
    let served = metrics.clone();
    runtime.spawn(async move { http::serve_metrics_listener(listener, served, &options).await });
    Ok(Some(metrics))
}

fn usage_error(message: &dyn std::fmt::Display) -> ExitCode {
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
    let (service, upstreams, file) = match build(common, &runtime) {
        Ok(built) => built,
        Err(e) => return usage_error(&e),
    };
    // However the command ends, the upstream servers are shut down first.
    let upstreams = upstreams.stop_on_drop(runtime.handle().clone());
    let subject = Subject::new("local");
    let outcome: Result<Value, Error> = match &cli.command {
        Command::Serve {
            http: Some(addr), ..
        } => {
            let checked = import_policy::require_policy(&file, &common.upstreams, &common.openapi)
                .map_err(|e| e.to_string())
                .and_then(|()| HttpOptions::from_config(&file.http).map_err(|e| e.to_string()));
            let mut options = match checked {
                Ok(o) => o,
                Err(e) => return usage_error(&e),
            };
            let metrics = match serve_metrics(&runtime, &file) {
                Ok(m) => m,
                Err(e) => return usage_error(&e),
            };
            if file.telemetry.metrics || metrics.is_some() {
                options.metrics = Some(metrics.unwrap_or_default());
            }
            let served = runtime.block_on(async {
                drain::cancel_on_signal(options.drain.clone());
                http::serve_http(service, addr, &options).await
            });
            // A drained server exits 0 once its upstream children are ended.
            return match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("codemode: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        Command::Serve { http: None, .. } => {
            let mut server = mcp::CodeModeServer::local(service);
            match serve_metrics(&runtime, &file) {
                Ok(Some(metrics)) => server = server.with_metrics(metrics),
                Ok(None) if file.telemetry.metrics => tracing::warn!(
                    "metrics are served on the HTTP listener (--http) or on [telemetry] listen"
                ),
                Ok(None) => {}
                Err(e) => return usage_error(&e),
            }
            return match runtime.block_on(mcp::serve_stdio_with(server)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("serve failed: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        Command::Run { program, .. } => {
            let bytes = match read_program(program) {
                Ok(b) => b,
                Err(e) => return usage_error(&e),
            };
            runtime.block_on(async {
                let source = program_text(bytes, service.config().limits.max_source_bytes)?;
                let data = service
                    .execute(&subject, &source, ExecuteOptions::default())
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
    // Before the result: no upstream log line can follow it.
    drop(upstreams);
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

fn read_program(path: &PathBuf) -> Result<Vec<u8>, String> {
    if path.as_os_str() == "-" {
        let mut source = Vec::new();
        std::io::stdin()
            .read_to_end(&mut source)
            .map_err(|e| format!("cannot read the program from stdin: {e}"))?;
        Ok(source)
    } else {
        std::fs::read(path).map_err(|e| format!("cannot read program {}: {e}", path.display()))
    }
}

/// The text of a program read as bytes, as `execute` would judge it: more
/// than `max_source_bytes` is `resource limit exceeded` (checked first, as
/// the service does), and bytes that are not UTF-8 are an invalid program
/// at the first offending byte.
pub fn program_text(bytes: Vec<u8>, max_source_bytes: usize) -> Result<String, Error> {
    if bytes.len() > max_source_bytes {
        return Err(Error::ResourceLimitExceeded);
    }
    if let Err(detail) = codemode_vm::source_from_bytes(&bytes) {
        return Err(Error::InvalidProgram(Some(detail)));
    }
    String::from_utf8(bytes).map_err(|_| Error::Internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common(args: &[&str]) -> Common {
        let mut argv = vec!["codemode", "search"];
        argv.extend_from_slice(args);
        argv.push("query");
        match Cli::parse_from(argv).command {
            Command::Search { common, .. } => common,
            _ => unreachable!("a search command"),
        }
    }

    fn setup_error(args: &[&str]) -> SetupError {
        match build_service(&common(args)) {
            Ok(_) => panic!("{args:?} built a service"),
            Err(e) => e,
        }
    }

    #[test]
    fn setup_errors_say_which_step_failed_in_the_sources_words() {
        let e = setup_error(&["--catalog", "/no/such/manifest.json"]);
        assert!(matches!(e, SetupError::Catalogs(_)), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("cannot read manifest /no/such/manifest.json: "),
            "{e}"
        );
        let e = setup_error(&["--config", "/no/such/codemode.toml"]);
        assert!(matches!(e, SetupError::Config(_)), "{e:?}");
        let e = setup_error(&["--catalog", "demo", "--catalog", "demo"]);
        assert!(matches!(e, SetupError::Build(_)), "{e:?}");
        assert!(build_service(&common(&["--catalog", "demo"])).is_ok());
    }
}
