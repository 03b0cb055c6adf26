//! Peak resident memory of the real `codemode run` (mimalloc, as shipped)
//! per family of allocating builtins and conversions: each program is run
//! with a 32 MiB heap budget and must give its exact outcome with the
//! process's peak RSS (`ru_maxrss` of that child, from `wait4`, baseline
//! included) at most the budget plus 32 MiB.
//!
//! Linux may start a child's `ru_maxrss` at the resident memory of the
//! process it was forked from, so the figures can overstate the binary's
//! peak, never understate it.
//!
//! Each family stops at the heap budget with a peak of at most 60 MiB in a
//! debug build; the binary alone takes about 25 MiB.

use std::io::Write;
use std::process::{Command, Stdio};

/// The heap budget of every case.
const HEAP: u64 = 32 << 20;
/// What the process may hold beyond the heap budget, its own baseline
/// included.
const ALLOWANCE: u64 = 32 << 20;
const LIMIT: &str = "resource limit exceeded";

/// Runs `main` returning `expr` after `body` and returns the outcome line
/// (stdout, else stderr) and the child's peak RSS in bytes. The child is
/// reaped by `wait4`, which also gives its resource usage.
#[allow(clippy::zombie_processes)]
fn run(body: &str, expr: &str) -> (String, u64) {
    let mut source = String::from("def main():\n");
    for line in body.lines() {
        source.push_str("    ");
        source.push_str(line);
        source.push('\n');
    }
    source.push_str(&format!("    return {expr}\n"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_codemode"))
        .args([
            "run",
            "--catalog",
            "conformance",
            &format!("--max-heap-bytes={HEAP}"),
            "--max-steps=1000000000000",
            "--max-time-ms=30000",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn codemode");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(source.as_bytes())
        .expect("write the source");
    drop(stdin);
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).expect("read stdout");
        s
    });
    let mut err = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut err).expect("read stderr");
    let out = out.join().expect("stdout reader");
    let mut status = 0;
    // SAFETY: plain FFI calls on a zeroed rusage and our own child's pid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    let outcome = if out.trim().is_empty() { err } else { out };
    (outcome.trim().to_string(), usage.ru_maxrss as u64 * 1024)
}

/// Runs every case and asserts its outcome and peak; all failures at once.
fn check(body: &str, cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for &(expr, want) in cases {
        let (outcome, peak) = run(body, expr);
        println!("{expr}: {outcome} peak {} KiB", peak >> 10);
        if outcome != want {
            failures.push(format!("{expr}: got {outcome:?}, want {want:?}"));
        }
        if peak > HEAP + ALLOWANCE {
            failures.push(format!("{expr}: peak {} MiB", peak >> 20));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn peak_memory_of_splitting() {
    check(
        "",
        &[
            (r#"len(("abcdefgh " * 2000000).split(" "))"#, LIMIT),
            (r#"len(("abcdefgh " * 2000000).split())"#, LIMIT),
            (r#"len(("ab\n" * 4000000).splitlines())"#, LIMIT),
            (r#"len(list(("x" * 3000000).elems()))"#, LIMIT),
            (
                r#"len(("abcdefgh " * 100000).split(" "))"#,
                r#"{"result":100001}"#,
            ),
        ],
    );
}

#[test]
fn peak_memory_of_building_lists() {
    check(
        "",
        &[
            ("len(list(range(5000000)))", LIMIT),
            ("len([i for i in range(5000000)])", LIMIT),
            ("len([0] * 3000000)", LIMIT),
            ("len(list(range(1000000)) + list(range(1000000)))", LIMIT),
            ("len(sorted(list(range(1500000)), reverse = True))", LIMIT),
            ("len(list(range(100000)) + [1])", r#"{"result":100001}"#),
        ],
    );
}

#[test]
fn peak_memory_of_building_strings() {
    check(
        "",
        &[
            (r#"len(("x" * 1000000).replace("x", "y" * 40))"#, LIMIT),
            (r#"len("".join([str(i) for i in range(3000000)]))"#, LIMIT),
            (r#"len(("x" * 20000000) + ("y" * 20000000))"#, LIMIT),
            (r#"len("ab" * 20000000)"#, LIMIT),
            (
                r#"len(("x" * 100000).replace("x", "yz"))"#,
                r#"{"result":200000}"#,
            ),
        ],
    );
}

#[test]
fn peak_memory_of_building_dicts_and_decoding_json() {
    check(
        "",
        &[
            ("len({i: i for i in range(3000000)})", LIMIT),
            (r#"len(json.decode("[" + "1," * 4000000 + "1]"))"#, LIMIT),
            ("len({i: i for i in range(100000)})", r#"{"result":100000}"#),
        ],
    );
}

#[test]
fn peak_memory_of_printing() {
    check(
        "",
        &[
            ("len(str(list(range(1500000))))", LIMIT),
            ("len(repr(list(range(1500000))))", LIMIT),
            ("len(json.encode(list(range(1500000))))", LIMIT),
            ("len(str(list(range(100000))))", r#"{"result":688890}"#),
            (
                "len(json.encode(list(range(100000))))",
                r#"{"result":588891}"#,
            ),
        ],
    );
}

/// `x`, a list 32 deep whose shared parts expand to 2^30 leaves, and `y`,
/// 31 deep.
const SHARED: &str = "x = [\"leaf\"]\nfor i in range(30):\n    x = [x, x]\ny = x[0]";

#[test]
fn peak_memory_of_shared_structures() {
    check(
        SHARED,
        &[
            ("len(str(x))", LIMIT),
            ("len(json.encode(x))", LIMIT),
            (r#"len("%s" % (x,))"#, LIMIT),
            ("x", LIMIT),
            ("conformance.echo(value = y)", LIMIT),
            ("conformance.echo(value = \"v\", extra = y)", LIMIT),
        ],
    );
}
