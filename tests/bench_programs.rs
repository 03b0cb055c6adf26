//! The agent-shaped benchmark programs (`benches/programs/agent/`) compute
//! what the reference computes: each runs with `N = 200` under the default
//! limits and must return the committed `NAME.expected` line (made by
//! starlark-go, or for the json program by CPython and starlark-rust, which
//! agree). `benches/compare.py` checks all engines agree at full size; this
//! keeps the programs valid between benchmark runs.

use codemode::vm::{execute, Data, Host, HostCall, Limits};
use std::path::Path;

struct NoHost;

impl Host for NoHost {
    type Error = ();
    fn call(&self, _call: HostCall<'_>) -> Result<Data, ()> {
        Err(())
    }
}

/// `source` with every identifier `N` replaced by `n`.
fn with_n(source: &str, n: usize) -> String {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(source.len());
    let mut prev = ' ';
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied().unwrap_or(' ');
        if c == 'N' && !is_ident(prev) && !is_ident(next) {
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
        prev = c;
    }
    out
}

#[test]
fn n_is_replaced_as_a_whole_identifier() {
    assert_eq!(
        with_n("range(N) + N_MAX + xN + N//4", 7),
        "range(7) + N_MAX + xN + 7//4"
    );
}

#[test]
fn agent_benchmark_programs_match_the_reference() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/programs/agent");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("reading benches/programs/agent")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "star"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 12,
        "the agent suite has {} programs",
        files.len()
    );
    for star in files {
        let source = with_n(&std::fs::read_to_string(&star).unwrap(), 200);
        let expected = std::fs::read_to_string(star.with_extension("expected"))
            .unwrap_or_else(|e| panic!("{}: {e}", star.display()));
        let want: serde_json::Value = serde_json::from_str(&expected).unwrap();
        let got = execute(&source, &[], &NoHost, &Limits::default(), None)
            .unwrap_or_else(|e| panic!("{}: {e:?}", star.display()));
        let have: serde_json::Value =
            serde_json::from_str(&format!("{{\"result\":{}}}", got.to_json_string())).unwrap();
        assert_eq!(have, want, "{}", star.display());
    }
}
