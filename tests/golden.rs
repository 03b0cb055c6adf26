//! Golden tests: every program under `tests/golden/{lang,vm,builtins}` runs through
//! the whole pipeline (`codemode_vm::execute`) and must produce what
//! starlark-go, the semantic reference, produced for it (the committed
//! `.expected` line; see `tests/golden/README.md`).
//!
//! Outcomes compare as follows: a result compares as JSON values (so `1`
//! and `1.0` differ); a syntax, resolve or runtime error raised by Starlark
//! code must be `invalid program: <codemode>:L:C: MSG` with the same line,
//! column and message (after removing the ` (hint: ...)` codemode adds for
//! a Python construct, which starlark-go does not have); an error raised inside a builtin must carry the same
//! message (codemode reports the call site's position, which the reference
//! does not know); the reference's own `invalid program` lines (missing
//! main, an unconvertible result) must be an invalid program too.

use codemode::vm::{execute, without_hint, Data, ExecError, Host, HostCall, Limits};
use std::path::{Path, PathBuf};

struct NoHost;

impl Host for NoHost {
    type Error = ();
    fn call(&self, _call: HostCall<'_>) -> Result<Data, ()> {
        Err(())
    }
}

fn cases(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("reading {}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "star"))
        .collect();
    files.sort();
    files
}

/// Compares one outcome with the expected line; `Err` describes a mismatch.
fn check(expected: &str, got: &Result<Data, ExecError<()>>) -> Result<(), String> {
    let got_text = match got {
        Ok(d) => format!("{{\"result\":{}}}", d.to_json_string()),
        Err(e) => match e {
            ExecError::InvalidProgram(d) => format!("invalid program: {d}"),
            other => format!("{other:?}"),
        },
    };
    let mismatch = || Err(format!("expected: {expected}\n     got: {got_text}"));
    if let Some(json) = expected.strip_prefix("{\"result\":") {
        let want: serde_json::Value = serde_json::from_str(&json[..json.len() - 1])
            .map_err(|e| format!("bad expected JSON: {e}"))?;
        return match got {
            Ok(d) => {
                let have: serde_json::Value =
                    serde_json::from_str(&d.to_json_string()).map_err(|e| e.to_string())?;
                if have == want {
                    Ok(())
                } else {
                    mismatch()
                }
            }
            Err(_) => mismatch(),
        };
    }
    let Err(ExecError::InvalidProgram(detail)) = got else {
        return mismatch();
    };
    let detail = without_hint(detail);
    for class in ["syntax error: ", "resolve error: "] {
        if let Some(want) = expected.strip_prefix(class) {
            return if detail == want { Ok(()) } else { mismatch() };
        }
    }
    if let Some(rest) = expected.strip_prefix("runtime error: ") {
        if let Some(rest) = rest.strip_prefix("<builtin> in ") {
            // `NAME:0:0: MSG`
            let msg = rest
                .splitn(4, ':')
                .nth(3)
                .map(str::trim_start)
                .unwrap_or("");
            return if detail.ends_with(&format!(": {msg}")) {
                Ok(())
            } else {
                mismatch()
            };
        }
        if let Some(rest) = rest.strip_prefix("<codemode> in ") {
            // `FUNC:L:C: MSG`
            let Some(colon) = rest.find(':') else {
                return mismatch();
            };
            let want = format!("<codemode>:{}", &rest[colon + 1..]);
            return if detail == want { Ok(()) } else { mismatch() };
        }
        return mismatch();
    }
    if expected.starts_with("invalid program: ") {
        return Ok(());
    }
    mismatch()
}

/// The deliberate deviations of `tests/golden/deviations.txt`:
/// `DIR/NAME` -> expected outcome.
fn deviations() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/deviations.txt");
    let text = std::fs::read_to_string(path).expect("reading deviations.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split('|').map(str::trim);
            let case = parts.next().unwrap_or_default().to_string();
            let outcome = parts.next().unwrap_or_default().to_string();
            let reason = parts.next().unwrap_or_default();
            assert!(!reason.is_empty(), "deviation without a reason: {l}");
            (case, outcome)
        })
        .collect()
}

fn check_deviation(outcome: &str, got: &Result<Data, ExecError<()>>) -> Result<(), String> {
    if outcome.starts_with("{\"result\":") {
        return check(outcome, got);
    }
    let ok = match got {
        Err(ExecError::ResourceLimit(_)) => outcome == "resource limit exceeded",
        Err(ExecError::InvalidProgram(d)) => outcome == format!("invalid program: {d}"),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("deviation expected: {outcome}\n     got: {got:?}"))
    }
}

fn run_dir(dir: &str) {
    let files = cases(dir);
    let deviations = deviations();
    assert!(!files.is_empty(), "no golden cases in {dir}");
    let mut failures = Vec::new();
    for star in &files {
        let expected_path = star.with_extension("expected");
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", expected_path.display()));
        let source = std::fs::read(star).unwrap();
        let got = match codemode::lang::source_from_bytes(&source) {
            Ok(src) => execute(src, &[], &NoHost, &Limits::default(), None),
            Err(d) => Err(ExecError::InvalidProgram(d.render(""))),
        };
        let name = format!("{dir}/{}", star.file_stem().unwrap().to_string_lossy());
        let verdict = match deviations.iter().find(|(c, _)| *c == name) {
            Some((_, outcome)) => check_deviation(outcome, &got),
            None => check(expected.trim_end_matches('\n'), &got),
        };
        if let Err(m) = verdict {
            failures.push(format!(
                "{}:\n  {m}",
                star.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    if !failures.is_empty() {
        panic!(
            "{} of {} golden cases in {dir} differ from starlark-go:\n{}",
            failures.len(),
            files.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn every_deviation_names_an_existing_case() {
    for (case, _) in deviations() {
        let star = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(format!("{case}.star"));
        assert!(star.exists(), "deviation for a missing case: {case}");
    }
}

#[test]
fn golden_lang_programs_match_starlark_go() {
    run_dir("lang");
}

#[test]
fn golden_vm_programs_match_starlark_go() {
    run_dir("vm");
}

#[test]
fn golden_builtins_programs_match_starlark_go() {
    run_dir("builtins");
}
