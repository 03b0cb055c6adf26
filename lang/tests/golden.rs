//! The front end against starlark-go's verdicts: every
//! `tests/golden/lang/NAME.star` has a `NAME.expected` holding the reference's
//! one line of output (`syntax error: <codemode>:L:C: msg`, `resolve error:
//! <codemode>:L:C: msg`, a `{"result":...}`, or a runtime/invalid-program
//! error). A syntax error must be our parse error, a resolve error our
//! resolve error, both with the same rendered position and text; anything
//! else means the program must parse and resolve. Every mismatch is printed
//! before the test fails, so one run shows them all.

use bumpalo::Bump;
use codemode_lang::{parse, resolve, source_from_bytes, Names};
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// The builtins of the language surface (`README.md`, "Language
/// surface"). The VM owns the real universe; the front end only needs the
/// names.
const UNIVERSE: &[&str] = &[
    "False",
    "None",
    "True",
    "abs",
    "all",
    "any",
    "bool",
    "bytes",
    "chr",
    "dict",
    "dir",
    "enumerate",
    "fail",
    "float",
    "getattr",
    "hasattr",
    "hash",
    "int",
    "json",
    "len",
    "list",
    "math",
    "max",
    "min",
    "ord",
    "print",
    "range",
    "repr",
    "reversed",
    "sorted",
    "str",
    "sum",
    "tuple",
    "type",
    "zip",
];

/// What the front end made of a program, in the reference's words: the
/// message without the hint that codemode adds for a Python construct.
fn front_end(bytes: &[u8]) -> String {
    let source = match source_from_bytes(bytes) {
        Ok(source) => source,
        // The valid prefix is intact in the lossy text, so is the position.
        Err(e) => {
            return format!(
                "syntax error: {}",
                e.render(&String::from_utf8_lossy(bytes))
            )
        }
    };
    let arena = Bump::new();
    let names = Names {
        predeclared: &[],
        universal: UNIVERSE,
    };
    match parse(&arena, source) {
        Err(e) => format!("syntax error: {}", e.with_hint(None).render(source)),
        Ok(module) => match resolve(&arena, module, &names) {
            Err(e) => format!("resolve error: {}", e.with_hint(None).render(source)),
            Ok(()) => "ok".to_string(),
        },
    }
}

/// Whether our outcome agrees with the reference's expected line.
fn agrees(expected: &str, got: &str) -> bool {
    if expected.starts_with("syntax error: ") || expected.starts_with("resolve error: ") {
        expected == got
    } else {
        got == "ok"
    }
}

fn cases(dir: &Path) -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "star"))
        .collect();
    cases.sort();
    cases
}

#[test]
fn golden_lang() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/lang");
    let cases = cases(&dir);
    assert!(!cases.is_empty(), "no golden cases in {}", dir.display());
    let mut failures = 0usize;
    for case in &cases {
        let name = case.file_name().map_or_else(
            || case.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let expected_path = case.with_extension("expected");
        let expected = match fs::read_to_string(&expected_path) {
            Ok(text) => text.trim_end_matches('\n').to_string(),
            Err(e) => {
                failures += 1;
                eprintln!("{name}: cannot read {}: {e}", expected_path.display());
                continue;
            }
        };
        let bytes = match fs::read(case) {
            Ok(bytes) => bytes,
            Err(e) => {
                failures += 1;
                eprintln!("{name}: cannot read: {e}");
                continue;
            }
        };
        // A panic is a mismatch like any other, not the end of the run.
        let got = catch_unwind(AssertUnwindSafe(|| front_end(&bytes)))
            .unwrap_or_else(|_| "panic".to_string());
        if !agrees(&expected, &got) {
            failures += 1;
            eprintln!("{name}:\n  expected: {expected}\n  got:      {got}");
        }
    }
    eprintln!(
        "golden lang: {} of {} cases agree",
        cases.len() - failures,
        cases.len()
    );
    assert_eq!(failures, 0, "{failures} golden case(s) disagree");
}
