//! Shared by the VM's integration tests.

use codemode_vm::{execute, without_hint, Data, ExecError, Host, HostCall, Limits};

/// A host for programs that call no capabilities: any call fails.
pub struct NoHost;

impl Host for NoHost {
    type Error = ();
    fn call(&self, _call: HostCall<'_>) -> Result<Data, ()> {
        Err(())
    }
}

/// Runs a program whose `main` has `body` (indented lines) under the
/// default limits.
#[allow(dead_code)] // not every test crate uses it
pub fn run_main(body: &str) -> Result<Data, ExecError<()>> {
    let src = format!("def main():\n{body}\n");
    execute(&src, &[], &NoHost, &Limits::default(), None)
}

/// `main`'s result for `return EXPR`, as compact JSON; an error panics.
#[allow(dead_code)] // not every test crate uses it
pub fn json_of(expr: &str) -> String {
    match run_main(&format!("    return {expr}")) {
        Ok(d) => d.to_json_string(),
        Err(e) => panic!("{expr}: unexpected error {e:?}"),
    }
}

/// The runtime error message of `return EXPR` in starlark-go's words
/// (without its position and codemode's hint); a result panics, and an
/// error other than an invalid program comes back in its debug form.
#[allow(dead_code)] // not every test crate uses it
pub fn error_of(expr: &str) -> String {
    match run_main(&format!("    return {expr}")) {
        Ok(d) => panic!("{expr}: unexpected result {}", d.to_json_string()),
        Err(ExecError::InvalidProgram(d)) => match without_hint(&d).strip_prefix("<codemode>:") {
            // `L:C: msg`
            Some(rest) => rest
                .splitn(3, ':')
                .nth(2)
                .unwrap_or("")
                .trim_start()
                .to_string(),
            None => without_hint(&d).to_string(),
        },
        Err(e) => format!("{e:?}"),
    }
}

/// One timed program at a time across a test crate's threads: they would
/// otherwise compete for the machine's cores and stretch each other's
/// wall time.
#[allow(dead_code)] // not every test crate uses it
static TIMED: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `src` under `limits` up to `attempts` times. Every run must end in
/// the time limit (or, when `heap_may_end_first` and the build is
/// optimized, in the heap limit: then the check ends there), and one run
/// must end within `bound`: noise on a shared machine only ever adds time.
/// Panics with every attempt's overrun past `limits.max_time` otherwise.
#[allow(dead_code)] // not every test crate uses it
pub fn assert_time_limit_within(
    src: &str,
    limits: &Limits,
    attempts: usize,
    bound: std::time::Duration,
    heap_may_end_first: bool,
    label: &str,
) {
    use codemode_vm::LimitKind;
    let _turn = TIMED.lock().unwrap_or_else(|e| e.into_inner());
    let mut took = Vec::new();
    for _ in 0..attempts {
        let start = std::time::Instant::now();
        let got = execute(src, &[], &NoHost, limits, None).map(|d| d.to_json_string());
        let elapsed = start.elapsed();
        if heap_may_end_first
            && cfg!(not(debug_assertions))
            && got == Err(ExecError::ResourceLimit(LimitKind::HeapBytes))
        {
            return;
        }
        assert_eq!(
            got,
            Err(ExecError::ResourceLimit(LimitKind::Time)),
            "{label}"
        );
        if elapsed <= bound {
            // Shown with `--nocapture`: the figure behind the assertion.
            println!("{label}: {elapsed:?}");
            return;
        }
        took.push(elapsed);
    }
    let overruns: Vec<String> = took
        .iter()
        .map(|t| {
            format!(
                "{:.1} ms",
                t.saturating_sub(limits.max_time).as_secs_f64() * 1e3
            )
        })
        .collect();
    panic!(
        "{label}: overran the {:?} deadline by {} (bound {bound:?})",
        limits.max_time,
        overruns.join(", ")
    );
}
