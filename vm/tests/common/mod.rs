//! Shared by the VM's integration tests.

use codemode_vm::{execute, Data, ExecError, Host, HostCall, Limits};

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

/// The runtime error message (without its position) of `return EXPR`; a
/// result panics, and an error other than an invalid program comes back
/// in its debug form.
#[allow(dead_code)] // not every test crate uses it
pub fn error_of(expr: &str) -> String {
    match run_main(&format!("    return {expr}")) {
        Ok(d) => panic!("{expr}: unexpected result {}", d.to_json_string()),
        Err(ExecError::InvalidProgram(d)) => match d.strip_prefix("<codemode>:") {
            // `L:C: msg`
            Some(rest) => rest
                .splitn(3, ':')
                .nth(2)
                .unwrap_or("")
                .trim_start()
                .to_string(),
            None => d,
        },
        Err(e) => format!("{e:?}"),
    }
}
