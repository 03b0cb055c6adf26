//! What the fuzz targets share: the budgets they run under, one tokio
//! runtime per fuzzing process, the services over the built-in catalogs,
//! a host that hands the fuzzer's bytes to a program, and the conversion of
//! fuzzed JSON to the VM's [`Data`].
//!
//! libFuzzer's panic hook aborts the process on any panic, even a caught
//! one, so every service built here disables `conformance.panic` (whose
//! handler panics on purpose); any other panic is a finding.

use codemode_catalog::{Catalog, CodeMode, Config, Limits, Manifest};
use codemode_vm::{execute, Data, ExecError, Host, HostCall};
use std::sync::OnceLock;
use std::time::Duration;

/// The ID of the conformance capability whose handler panics on purpose.
pub const PANIC_ID: &str = "conformance.panic";

/// The small budgets every fuzzed execution runs under: enough for real
/// programs, small enough to keep thousands of executions per second.
pub fn small_limits() -> Limits {
    Limits {
        max_steps: 20_000,
        max_time: Duration::from_millis(100),
        max_heap_bytes: 4 << 20,
        max_value_bytes: 64 << 10,
        max_intermediate_bytes: 256 << 10,
        max_native_calls: 10,
        ..Limits::default()
    }
}

/// The process's tokio runtime (two workers: the service's blocking pool
/// and handler tasks need one besides the fuzzing thread).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// The service over the built-in `conformance` catalog (with the panicking
/// capability disabled) under [`small_limits`], as the binary builds it.
pub fn conformance_service() -> &'static CodeMode {
    static SERVICE: OnceLock<CodeMode> = OnceLock::new();
    SERVICE.get_or_init(|| {
        let config = Config {
            limits: small_limits(),
            ..Config::default()
        };
        codemode_server::load_catalogs(&["conformance".into()], &[PANIC_ID.into()], config)
            .expect("the conformance catalog loads")
    })
}

/// A catalog with every shape the repository knows: the `demo` and
/// `conformance` capabilities and, when `CODEMODE_GITHUB_MANIFEST` names
/// it, the 1,223-entry GitHub REST manifest.
pub fn rich_catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut builder = Catalog::builder()
            .capabilities(codemode_server::demo_capabilities())
            .capabilities(codemode_server::conformance_capabilities());
        let manifest = std::env::var_os("CODEMODE_GITHUB_MANIFEST").unwrap_or_default();
        if let Ok(text) = std::fs::read_to_string(manifest) {
            let manifest = Manifest::from_json(&text).expect("the GitHub manifest parses");
            builder = builder.manifest(manifest);
        }
        builder.build().expect("the rich catalog builds")
    })
}

/// Serves one capability, `fuzz.input()`, whose result is a fixed value:
/// how a target hands fuzzed data to a program.
pub struct InputHost(pub Data);

impl Host for InputHost {
    type Error = ();
    fn call(&self, call: HostCall<'_>) -> Result<Data, ()> {
        match call.name {
            "fuzz.input" if call.args.is_empty() => Ok(self.0.clone()),
            _ => Err(()),
        }
    }
}

/// The name [`InputHost`] serves.
pub const INPUT_NAMES: &[&str] = &["fuzz.input"];

/// Runs `source` with `input` as the result of `fuzz.input()` under
/// generous budgets (the target's subject is the builtin, not the budget).
pub fn run_with_input(source: &str, input: Data) -> Result<Data, ExecError<()>> {
    let limits = Limits {
        max_time: Duration::from_secs(2),
        max_heap_bytes: 16 << 20,
        max_value_bytes: 4 << 20,
        max_intermediate_bytes: 4 << 20,
        max_value_depth: 600,
        ..Limits::default()
    };
    execute(source, INPUT_NAMES, &InputHost(input), &limits, None)
}

/// The marker a program's `fail` carries when the target's own property
/// is violated (as opposed to an ordinary runtime error).
pub const BROKEN: &str = "FUZZ-PROPERTY-BROKEN";

/// Panics (a finding) when an execution broke the target's property;
/// every other outcome is fine.
pub fn check_property(outcome: &Result<Data, ExecError<()>>) {
    if let Err(ExecError::InvalidProgram(detail)) = outcome {
        assert!(!detail.contains(BROKEN), "{detail}");
    }
}

/// Fuzzed JSON as [`Data`]: `None` when it holds what `Data` cannot
/// (integers outside i64).
pub fn json_to_data(value: &serde_json::Value) -> Option<Data> {
    codemode_catalog::to_data(value).ok()
}

/// Splits fuzzed bytes at the first NUL into a text and a JSON value; a
/// tail that is not JSON becomes one string.
pub fn text_and_json(data: &[u8]) -> (String, Data) {
    let cut = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let text = String::from_utf8_lossy(&data[..cut]).into_owned();
    let tail = data.get(cut + 1..).unwrap_or(&[]);
    let value = serde_json::from_slice::<serde_json::Value>(tail)
        .ok()
        .and_then(|v| json_to_data(&v))
        .unwrap_or_else(|| Data::Str(String::from_utf8_lossy(tail).into_owned()));
    (text, value)
}
