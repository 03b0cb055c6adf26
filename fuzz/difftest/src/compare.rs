//! The codemode side and the comparison of outcomes.
//!
//! A program runs in process through `codemode_vm::execute` with the
//! default limits and a host that serves no capability. Its outcome is
//! compared with the reference's line the way the golden tests compare with
//! a committed `.expected` line: results as JSON values; syntax, resolve and
//! Starlark-level runtime errors by position and message (without the hint
//! codemode adds for a Python construct); errors raised
//! inside a builtin by message (the reference has no position for them);
//! the reference's own `invalid program` rejections (an unconvertible
//! result) by class only.

use codemode_vm::{execute, without_hint, Data, ExecError, Host, HostCall, Limits};

struct NoHost;

impl Host for NoHost {
    type Error = ();
    fn call(&self, _call: HostCall<'_>) -> Result<Data, ()> {
        Err(())
    }
}

/// What codemode did with one program.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// main's result as compact JSON.
    Result(String),
    /// `invalid program: DETAIL`, without a hint.
    Invalid(String),
    /// A budget was exceeded.
    Limit(String),
    /// Anything else (never expected here).
    Other(String),
}

impl Outcome {
    pub fn line(&self) -> String {
        match self {
            Outcome::Result(j) => format!("{{\"result\":{j}}}"),
            Outcome::Invalid(d) => format!("invalid program: {d}"),
            Outcome::Limit(k) => format!("resource limit exceeded ({k})"),
            Outcome::Other(s) => s.clone(),
        }
    }
}

pub fn run_codemode(source: &str) -> Outcome {
    match execute(source, &[], &NoHost, &Limits::default(), None) {
        Ok(d) => Outcome::Result(d.to_json_string()),
        Err(ExecError::InvalidProgram(d)) => Outcome::Invalid(without_hint(&d).to_string()),
        Err(ExecError::ResourceLimit(k)) => Outcome::Limit(format!("{k:?}")),
        Err(e) => Outcome::Other(format!("{e}")),
    }
}

/// True when codemode's outcome matches the reference's line.
pub fn agrees(expected: &str, got: &Outcome) -> bool {
    if let Some(json) = expected.strip_prefix("{\"result\":") {
        let Outcome::Result(have) = got else {
            return false;
        };
        let Some(json) = json.strip_suffix('}') else {
            return false;
        };
        let (Ok(want), Ok(have)) = (
            serde_json::from_str::<serde_json::Value>(json),
            serde_json::from_str::<serde_json::Value>(have),
        ) else {
            return false;
        };
        return want == have;
    }
    let Outcome::Invalid(detail) = got else {
        return false;
    };
    for class in ["syntax error: ", "resolve error: "] {
        if let Some(want) = expected.strip_prefix(class) {
            return detail == want;
        }
    }
    if let Some(rest) = expected.strip_prefix("runtime error: ") {
        if let Some(rest) = rest.strip_prefix("<builtin> in ") {
            let msg = rest
                .splitn(4, ':')
                .nth(3)
                .map(str::trim_start)
                .unwrap_or("");
            return detail.ends_with(&format!(": {msg}"));
        }
        if let Some(rest) = rest.strip_prefix("<codemode> in ") {
            let Some(colon) = rest.find(':') else {
                return false;
            };
            return *detail == format!("<codemode>:{}", &rest[colon + 1..]);
        }
        return false;
    }
    expected.starts_with("invalid program: ")
}

/// A coarse signature of a disagreement, to group findings: the classes of
/// both outcomes and the reference's message with digits blanked.
pub fn signature(expected: &str, got: &Outcome) -> String {
    let class = |s: &str| -> &'static str {
        if s.starts_with("{\"result\"") {
            "result"
        } else if s.starts_with("runtime error: <builtin>") {
            "builtin-error"
        } else if s.starts_with("runtime error") {
            "runtime-error"
        } else if s.starts_with("invalid program") {
            "invalid"
        } else if s.starts_with("syntax") {
            "syntax"
        } else if s.starts_with("resolve") {
            "resolve"
        } else {
            "other"
        }
    };
    let got_class = match got {
        Outcome::Result(_) => "result",
        Outcome::Invalid(_) => "invalid",
        Outcome::Limit(_) => "limit",
        Outcome::Other(_) => "other",
    };
    let msg = if expected.starts_with("{\"result\"") {
        String::new()
    } else {
        let m = expected.rsplit(": ").next().unwrap_or("");
        m.chars()
            .map(|c| if c.is_ascii_digit() { '0' } else { c })
            .take(60)
            .collect()
    };
    format!("{}-vs-{}: {msg}", class(expected), got_class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_compare_as_json_values() {
        let got = run_codemode("def main():\n    return [1, 1.5, \"a\"]\n");
        assert!(agrees("{\"result\":[1,1.5,\"a\"]}", &got));
        assert!(!agrees("{\"result\":[1,1.5,\"b\"]}", &got));
        assert!(!agrees("{\"result\":[1.0,1.5,\"a\"]}", &got));
    }

    #[test]
    fn errors_compare_like_the_golden_tests() {
        let got = run_codemode("def main():\n    return 1 // 0\n");
        assert!(agrees(
            "runtime error: <codemode> in main:2:14: floored division by zero",
            &got
        ));
        assert!(!agrees(
            "runtime error: <codemode> in main:2:13: floored division by zero",
            &got
        ));
        let got = run_codemode("def main():\n    return 1 + \"a\"\n");
        assert!(agrees(
            "runtime error: <codemode> in main:2:14: unknown binary op: int + string",
            &got
        ));
        let got = run_codemode("def main():\n    return len(1)\n");
        assert!(agrees(
            "runtime error: <builtin> in len:0:0: len: value of type int has no len",
            &got
        ));
        assert_eq!(
            signature(
                "runtime error: <codemode> in main:2:14: index 12 out of range",
                &got
            ),
            "runtime-error-vs-invalid: index 00 out of range"
        );
    }
}
