//! Hostile inputs: memory bombs, time bombs in builtins, deep nesting in
//! source text and in values, recursion attempts, huge literals, and source
//! bytes that are not plain text (invalid UTF-8, NUL, CRLF, a BOM, sizes at
//! the byte limit). Each must end with the contract's exact text, within
//! its time limit plus 10%, and within the heap budget plus a fixed
//! allowance of peak memory.
//!
//! Every case runs in a child process: this test binary started again to
//! run only the ignored [`child`] test, which does what `codemode run
//! --catalog conformance FLAGS -` does — the same flag parsing, service
//! construction and byte-to-source rules ([`program_text`]) — and reports
//! the outcome text, the wall time of the execution measured around it, and
//! its resident memory before the execution (`VmRSS`) and at its peak
//! (`VmHWM`): the peak must stay within the heap budget plus a fixed
//! allowance, and what the execution added within the budget plus a smaller
//! one. The parent runs one child at a
//! time, so the children's timings do not compete with each other on a
//! small machine.

// Its bounds are of time and memory as shipped: a build that collects at
// every safe point (`gc-stress`) spends both differently.
#![cfg(not(feature = "gc-stress"))]

use clap::Parser;
use codemode::catalog::{ExecuteOptions, Subject};
use codemode::server::build_service;
use codemode::server::{program_text, Cli, Command};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable that carries the child's flags, one per line.
const FLAGS_VAR: &str = "CODEMODE_HOSTILE_FLAGS";
/// The prefix of the child's report line.
const REPORT: &str = "HOSTILE-REPORT ";

/// The heap budget of every case (MaxHeapBytes).
const HEAP: u64 = 32 << 20;
/// Memory a child may use beyond the heap budget: the test harness, the
/// runtime and the catalog (about 12 MiB before any program runs), the
/// source, and the interpreter's own transient buffers.
const ALLOWANCE: u64 = 32 << 20;
/// What an execution itself may add to the child's resident memory beyond
/// the heap budget (transient buffers of the interpreter).
const RUN_ALLOWANCE: u64 = 8 << 20;
/// The execution time limit of cases that are not about time.
const TIME: Duration = Duration::from_secs(3);
/// The short deadline of the time bombs.
const SHORT: Duration = Duration::from_millis(400);

/// What a child reports.
#[derive(Debug)]
struct Report {
    /// `{"result":…}` as `codemode run` prints it, or the error text.
    outcome: String,
    /// Wall time from the source bytes to the outcome.
    elapsed: Duration,
    /// Peak resident memory of the child.
    peak_bytes: u64,
    /// Resident memory of the child just before the execution.
    base_bytes: u64,
}

/// One child at a time.
static CHILDREN: Mutex<()> = Mutex::new(());

/// Runs `source` in a child with the suite's heap budget, `time` as the
/// execution time limit and `flags` on top.
fn run_child(source: &[u8], time: Duration, flags: &[&str]) -> Report {
    let mut all = vec![
        format!("--max-heap-bytes={HEAP}"),
        format!("--max-time-ms={}", time.as_millis()),
    ];
    all.extend(flags.iter().map(|f| f.to_string()));
    let _one = CHILDREN.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--ignored",
            "--exact",
            "child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(FLAGS_VAR, all.join("\n"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child");
    let mut stdin = child.stdin.take().expect("child stdin");
    stdin.write_all(source).expect("write the source");
    drop(stdin);
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .expect("child stdout")
        .read_to_string(&mut stdout)
        .expect("read the report");
    child
        .stderr
        .take()
        .expect("child stderr")
        .read_to_string(&mut stderr)
        .expect("read the child's stderr");
    let status = child.wait().expect("wait for the child");
    let line = stdout
        .lines()
        .find_map(|l| l.split_once(REPORT).map(|(_, report)| report))
        .unwrap_or_else(|| panic!("no report ({status}):\n{stdout}\n{stderr}"));
    let report: Value = serde_json::from_str(line).expect("a JSON report");
    Report {
        outcome: report["outcome"].as_str().expect("outcome").to_string(),
        elapsed: Duration::from_micros(report["elapsed_us"].as_u64().expect("elapsed")),
        peak_bytes: report["peak_kib"].as_u64().expect("peak") * 1024,
        base_bytes: report["base_kib"].as_u64().expect("base") * 1024,
    }
}

/// Runs `source` and asserts the exact outcome, the time limit plus 10%,
/// and the heap budget plus the allowance.
fn assert_outcome(source: &[u8], time: Duration, flags: &[&str], want: &str) -> Report {
    assert_outcome_within(source, time, flags, want, time + time / 10)
}

/// [`assert_outcome`] with the bound on the elapsed time given: the
/// outcome and memory are checked on every attempt, the time on the best
/// of up to three, so that one slow stretch of a shared machine (the child
/// waiting for a core) cannot fail it while a program that really runs
/// long fails all three.
fn assert_outcome_within(
    source: &[u8],
    time: Duration,
    flags: &[&str],
    want: &str,
    within: Duration,
) -> Report {
    let mut attempt = 1;
    loop {
        let report = checked_outcome(source, time, flags, want);
        if report.elapsed <= within {
            return report;
        }
        assert!(
            attempt < 3,
            "took {:?} in the last of three attempts, bound {within:?}",
            report.elapsed
        );
        attempt += 1;
    }
}

/// One run of `source` whose outcome and memory must be as expected.
fn checked_outcome(source: &[u8], time: Duration, flags: &[&str], want: &str) -> Report {
    let report = run_child(source, time, flags);
    // Shown with `--nocapture`: the figures behind the assertions.
    println!("{report:?}");
    assert_eq!(report.outcome, want, "{report:?}");
    assert!(
        report.peak_bytes <= HEAP + ALLOWANCE,
        "peak {} MiB",
        report.peak_bytes >> 20
    );
    let grown = report.peak_bytes.saturating_sub(report.base_bytes);
    assert!(
        grown <= HEAP + RUN_ALLOWANCE,
        "the execution added {} MiB",
        grown >> 20
    );
    report
}

/// A program whose `main` returns `expr` after the statements `body`.
fn program(body: &str, expr: &str) -> Vec<u8> {
    let mut s = String::from("def main():\n");
    for line in body.lines() {
        s.push_str("    ");
        s.push_str(line);
        s.push('\n');
    }
    s.push_str(&format!("    return {expr}\n"));
    s.into_bytes()
}

const LIMIT: &str = "resource limit exceeded";

/// A memory figure of this process from `/proc/self/status` (`VmRSS:`,
/// `VmHWM:`), in KiB.
fn memory_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// The child: `codemode run --catalog conformance FLAGS -`, measured.
#[test]
#[ignore = "the child process of the other tests of this file"]
fn child() {
    let Ok(flags) = std::env::var(FLAGS_VAR) else {
        panic!("run by the other tests of this file, with {FLAGS_VAR} set");
    };
    let mut args = vec!["codemode", "run", "--catalog", "conformance"];
    args.extend(flags.lines());
    args.push("-");
    let cli = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("bad flags: {e}"));
    let Command::Run { common, .. } = &cli.command else {
        panic!("not a run command");
    };
    let service = build_service(common).expect("the service builds");
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .expect("read the source");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let subject = Subject::new("local");
    let base_kib = memory_kib("VmRSS:");
    let start = Instant::now();
    let outcome = runtime.block_on(async {
        let source = program_text(bytes, service.config().limits.max_source_bytes)?;
        service
            .execute(&subject, &source, ExecuteOptions::default())
            .await
    });
    let elapsed = start.elapsed();
    let outcome = match outcome {
        Ok(data) => format!("{{\"result\":{}}}", data.to_json_string()),
        Err(e) => e.to_string(),
    };
    let report = json!({
        "outcome": outcome,
        "elapsed_us": elapsed.as_micros() as u64,
        "peak_kib": memory_kib("VmHWM:"),
        "base_kib": base_kib,
    });
    println!("{REPORT}{report}");
}

// Memory bombs: refused before allocating, or stopped at the heap budget.

#[test]
fn repeating_a_string_a_trillion_times() {
    let source = program("", r#""x" * (1 << 40)"#);
    assert_outcome_within(&source, TIME, &[], LIMIT, Duration::from_millis(200));
}

#[test]
fn repeating_a_list_a_billion_times() {
    let source = program("", "[0] * 1000000000");
    assert_outcome_within(&source, TIME, &[], LIMIT, Duration::from_millis(200));
}

#[test]
fn doubling_a_string() {
    let body = "s = \"x\"\nfor i in range(64):\n    s = s + s";
    assert_outcome(&program(body, "len(s)"), TIME, &[], LIMIT);
}

#[test]
fn doubling_a_list() {
    let body = "l = [1]\nfor i in range(64):\n    l = l + l";
    assert_outcome(&program(body, "len(l)"), TIME, &[], LIMIT);
}

#[test]
fn doubling_a_list_in_place() {
    let body = "l = [1]\nfor i in range(64):\n    l.extend(l)";
    assert_outcome(&program(body, "len(l)"), TIME, &[], LIMIT);
}

#[test]
fn a_huge_dict() {
    let source = program("", "len(dict(enumerate(range(100000000))))");
    assert_outcome(&source, TIME, &[], LIMIT);
    let body = "d = {}\nfor i in range(100000000):\n    d[i] = i";
    let steps = "--max-steps=1000000000000";
    assert_outcome(&program(body, "len(d)"), TIME, &[steps], LIMIT);
}

#[test]
fn joining_a_huge_list() {
    // The list is small; the joined string would be 100 MB.
    let source = program("", r#"len(",".join(["x" * 10000] * 10000))"#);
    assert_outcome(&source, TIME, &[], LIMIT);
}

#[test]
fn encoding_a_huge_value() {
    let source = program("", r#"len(json.encode(["x" * 100000] * 1000))"#);
    assert_outcome(&source, TIME, &[], LIMIT);
    let source = program("", "len(repr([\"x\" * 100000] * 1000))");
    assert_outcome(&source, TIME, &[], LIMIT);
}

#[test]
fn squaring_a_huge_int() {
    // 3 squared 64 times would have 2^64 bits.
    let body = "x = 3\nfor i in range(64):\n    x = x * x";
    assert_outcome(&program(body, "x > 0"), TIME, &[], LIMIT);
}

// Peak memory per family of allocating builtins and conversions: each
// stops at the heap budget (or the value byte limit) with the process's
// peak within the budget plus the allowance, and a smaller input of the same
// shape gives its exact result.

/// Steps enough for loops over millions of elements.
const MANY_STEPS: &str = "--max-steps=1000000000000";

#[test]
fn peak_memory_of_splitting() {
    let cases = [
        (r#"len(("abcdefgh " * 2000000).split(" "))"#, LIMIT),
        (r#"len(("abcdefgh " * 2000000).split())"#, LIMIT),
        (
            r#"len(("abcdefgh " * 2000000).rsplit(" ", 1999999))"#,
            LIMIT,
        ),
        (r#"len(("ab\n" * 4000000).splitlines())"#, LIMIT),
        (r#"len(list(("x" * 3000000).elems()))"#, LIMIT),
        (r#"len(list(("é" * 1500000).codepoints()))"#, LIMIT),
        (
            r#"len(("abcdefgh " * 100000).split(" "))"#,
            r#"{"result":100001}"#,
        ),
        (
            r#"len(("ab\n" * 100000).splitlines())"#,
            r#"{"result":100000}"#,
        ),
    ];
    for (expr, want) in cases {
        assert_outcome(&program("", expr), TIME, &[], want);
    }
}

#[test]
fn peak_memory_of_building_lists() {
    let cases = [
        ("len(list(range(5000000)))", LIMIT),
        ("len([i for i in range(5000000)])", LIMIT),
        ("len([[i] for i in range(5000000)])", LIMIT),
        ("len([str(i) for i in range(5000000)])", LIMIT),
        ("len([0] * 3000000)", LIMIT),
        ("len(list(range(1000000)) + list(range(1000000)))", LIMIT),
        ("len(sorted(list(range(1500000)), reverse = True))", LIMIT),
        ("len(sorted(range(1000000), key = lambda x: -x))", LIMIT),
        ("len(list(range(100000)) + [1])", r#"{"result":100001}"#),
    ];
    for (expr, want) in cases {
        assert_outcome(&program("", expr), TIME, &[MANY_STEPS], want);
    }
}

#[test]
fn peak_memory_of_building_strings() {
    let cases = [
        (r#"len(("x" * 1000000).replace("x", "y" * 40))"#, LIMIT),
        (r#"len("".join([str(i) for i in range(3000000)]))"#, LIMIT),
        (r#"len(("x" * 20000000) + ("y" * 20000000))"#, LIMIT),
        (r#"len("ab" * 20000000)"#, LIMIT),
        (r#"len("%s%s" % ("x" * 12000000, "y" * 12000000))"#, LIMIT),
        (
            r#"len("{}{}".format("x" * 12000000, "y" * 12000000))"#,
            LIMIT,
        ),
        ("len(json.encode(list(range(1500000))))", LIMIT),
        ("len(repr(list(range(1500000))))", LIMIT),
        (
            r#"len(("x" * 100000).replace("x", "yz"))"#,
            r#"{"result":200000}"#,
        ),
    ];
    for (expr, want) in cases {
        assert_outcome(&program("", expr), TIME, &[MANY_STEPS], want);
    }
}

#[test]
fn peak_memory_of_building_dicts() {
    let cases = [
        ("len({i: i for i in range(3000000)})", LIMIT),
        ("len({str(i): i for i in range(3000000)})", LIMIT),
        ("len(dict([(i, i) for i in range(3000000)]))", LIMIT),
        ("len({i: i for i in range(100000)})", r#"{"result":100000}"#),
    ];
    for (expr, want) in cases {
        assert_outcome(&program("", expr), TIME, &[MANY_STEPS], want);
    }
}

#[test]
fn peak_memory_of_decoding_json() {
    let cases = [
        (r#"len(json.decode("[" + "1," * 4000000 + "1]"))"#, LIMIT),
        (
            r#"len(json.decode("[" + "\"ab\"," * 1000000 + "1]"))"#,
            LIMIT,
        ),
        (
            r#"len(json.decode("[" + "{\"k\":[]}," * 500000 + "1]"))"#,
            LIMIT,
        ),
        (
            r#"len(json.decode("[" + "1," * 100000 + "1]"))"#,
            r#"{"result":100001}"#,
        ),
    ];
    for (expr, want) in cases {
        assert_outcome(&program("", expr), TIME, &[], want);
    }
}

/// Statements that build `x`, a list 32 deep whose shared parts expand to
/// 2^30 leaves, and `y`, 31 deep with 2^29 leaves.
const SHARED: &str = "x = [\"leaf\"]\nfor i in range(30):\n    x = [x, x]\ny = x[0]";

#[test]
fn peak_memory_of_printing_shared_structures() {
    // Each stops at the heap budget or, in a slow build, at the deadline.
    for expr in ["len(str(x))", "len(json.encode(x))", r#"len("%s" % (x,))"#] {
        assert_outcome(&program(SHARED, expr), TIME, &[], LIMIT);
    }
    // Small enough to print: 2^10 leaves.
    let body = "x = [\"leaf\"]\nfor i in range(10):\n    x = [x, x]";
    assert_outcome(
        &program(body, "[len(str(x)), len(json.encode(x))]"),
        TIME,
        &[],
        r#"{"result":[12284,11261]}"#,
    );
}

#[test]
fn peak_memory_of_converting_shared_structures() {
    // The result and a capability argument stop at the value byte limit
    // (1 MiB) without expanding the value.
    for expr in [
        "x",
        "conformance.echo(value = y)",
        "conformance.echo(value = \"v\", extra = y)",
    ] {
        let r = assert_outcome(&program(SHARED, expr), TIME, &[], LIMIT);
        assert!(r.elapsed < Duration::from_secs(2), "{r:?}");
    }
}

// Time bombs: stopped by a short deadline inside builtins.

#[test]
fn an_endless_loop_under_a_short_deadline() {
    let body = "for i in range(1 << 62):\n    pass";
    let steps = "--max-steps=1000000000000";
    let r = assert_outcome(&program(body, "0"), SHORT, &[steps], LIMIT);
    assert!(r.elapsed >= SHORT, "{r:?}");
}

#[test]
fn builtins_over_huge_inputs_under_a_short_deadline() {
    let steps = "--max-steps=1000000000000";
    // Each call scans 16 MB; only the deadline stops the loop.
    let body = "s = \"x\" * (16 << 20)\nfor i in range(1 << 40):\n    s.find(\"y\")";
    let r = assert_outcome(&program(body, "0"), SHORT, &[steps], LIMIT);
    assert!(r.elapsed >= SHORT, "{r:?}");
    // Each call visits 1,000,000 elements and allocates nothing, so the
    // heap never stops the loop either.
    let body = "l = list(range(1000000))\nfor i in range(1 << 40):\n    l.index(999999)";
    let r = assert_outcome(&program(body, "0"), SHORT, &[steps], LIMIT);
    assert!(r.elapsed >= SHORT, "{r:?}");
}

#[test]
fn a_slow_capability_under_a_short_deadline() {
    let source = program("", "conformance.sleep(ms = 60000)");
    let r = assert_outcome(&source, SHORT, &[], LIMIT);
    assert!(r.elapsed >= SHORT, "{r:?}");
}

// Deep nesting in source text and in values.

#[test]
fn a_hundred_thousand_brackets() {
    let mut source = b"def main():\n    return ".to_vec();
    source.extend(std::iter::repeat_n(b'[', 100_000));
    source.extend(std::iter::repeat_n(b']', 100_000));
    source.push(b'\n');
    let big = "--max-source-bytes=1000000";
    assert_outcome(
        &source,
        TIME,
        &[big],
        "invalid program: <codemode>:2:212: nesting too deep",
    );
    assert_outcome(&source, TIME, &[], LIMIT);
}

#[test]
fn deeply_nested_blocks() {
    let mut source = String::from("def main():\n");
    for depth in 1..=300 {
        source.push_str(&" ".repeat(depth));
        source.push_str("if True:\n");
    }
    source.push_str(&" ".repeat(301));
    source.push_str("return 1\n");
    assert_outcome(
        source.as_bytes(),
        TIME,
        &[],
        "invalid program: <codemode>:202:202: nesting too deep",
    );
}

/// Statements that build `x`, a list nested 10,000 deep, and `y`, an equal one.
const DEEP: &str = "x = []\ny = []\nfor i in range(10000):\n    x = [x]\n    y = [y]";

#[test]
fn repr_of_a_deep_list() {
    // Printed in full, as starlark-go prints it (only cycles print `...`).
    let want = format!("{}{}", "[".repeat(10001), "]".repeat(10001));
    let expr = format!("[len(repr(x)), repr(x) == {want:?}, str(x) == repr(x)]");
    assert_outcome(
        &program(DEEP, &expr),
        TIME,
        &[],
        "{\"result\":[20002,true,true]}",
    );
}

#[test]
fn repr_of_a_deep_dict_and_tuple() {
    let body = "d = {}\nt = ()\nfor i in range(100000):\n    d = dict(k = d)\n    t = (t,)";
    let expr = r#"[len(str(d)), str(d) == "{\"k\": " * 100000 + "{}" + "}" * 100000, len(repr(t)), repr(t) == "(" * 100000 + "()" + ",)" * 100000]"#;
    assert_outcome(
        &program(body, expr),
        TIME,
        &[],
        "{\"result\":[700002,true,300002,true]}",
    );
}

#[test]
fn comparing_deep_lists() {
    assert_outcome(
        &program(DEEP, "x == y"),
        TIME,
        &[],
        "invalid program: <codemode>:7:14: comparison exceeded maximum recursion depth",
    );
}

#[test]
fn encoding_a_deep_list() {
    // json.encode stops at its nesting bound (512), naming the path to it
    // the way starlark-go names the path to any error.
    let want = format!(
        "invalid program: <codemode>:7:23: json.encode: {}nesting too deep",
        "at list index 0: ".repeat(512)
    );
    assert_outcome(&program(DEEP, "json.encode(x)"), TIME, &[], &want);
}

#[test]
fn returning_a_deep_list() {
    assert_outcome(&program(DEEP, "x"), TIME, &[], LIMIT);
}

// Recursion attempts.

#[test]
fn direct_recursion() {
    let source = b"def f(n):\n    return f(n + 1)\n\ndef main():\n    return f(0)\n";
    assert_outcome(
        source,
        TIME,
        &[],
        "invalid program: <codemode>:2:12: function f called recursively",
    );
}

#[test]
fn mutual_recursion() {
    let source =
        b"def f(n):\n    return g(n)\n\ndef g(n):\n    return f(n)\n\ndef main():\n    return f(0)\n";
    assert_outcome(
        source,
        TIME,
        &[],
        "invalid program: <codemode>:2:12: function f called recursively",
    );
}

#[test]
fn recursion_through_lambdas() {
    let body = "f = [None]\nf[0] = lambda n: f[0](n + 1)";
    assert_outcome(
        &program(body, "f[0](0)"),
        TIME,
        &[],
        "invalid program: <codemode>:3:22: function lambda called recursively",
    );
}

#[test]
fn recursion_through_a_builtin() {
    let source = b"def f(x):\n    return sorted([1, 2], key = f)\n\ndef main():\n    return f(0)\n";
    assert_outcome(
        source,
        TIME,
        &[],
        // starlark-go reports entering `f` at its first instruction, which
        // loads the universal `sorted` and so has the `def`'s position.
        "invalid program: <codemode>:1:1: function f called recursively",
    );
}

// Huge literals.

#[test]
fn a_huge_int_literal() {
    let digits = "9".repeat(60_000);
    let source = program(&format!("x = {digits}"), "x % 1000");
    assert_outcome(&source, TIME, &[], "{\"result\":999}");
}

#[test]
fn a_huge_string_literal() {
    let text = "x".repeat(60_000);
    let source = program(&format!("s = \"{text}\""), "len(s)");
    assert_outcome(&source, TIME, &[], "{\"result\":60000}");
}

#[test]
fn a_huge_list_literal() {
    let items = "1, ".repeat(20_000);
    let source = program(&format!("l = [{items}]"), "len(l)");
    assert_outcome(&source, TIME, &[], "{\"result\":20000}");
}

// Bytes that are not plain text, and sizes at the byte limit.

#[test]
fn invalid_utf8() {
    let source = b"def main():\n    return \"a\xffb\"\n";
    assert_outcome(
        source,
        TIME,
        &[],
        "invalid program: <codemode>:2:14: invalid UTF-8 encoding",
    );
}

#[test]
fn a_nul_byte() {
    let source = b"def main():\n    return 1\x00\n";
    assert_outcome(
        source,
        TIME,
        &[],
        "invalid program: <codemode>:2:13: unexpected input character '\\x00'",
    );
}

#[test]
fn crlf_line_ends() {
    let source = b"def main():\r\n    x = 1\r\n    return x + 1\r\n";
    assert_outcome(source, TIME, &[], "{\"result\":2}");
}

#[test]
fn a_byte_order_mark() {
    let source = b"\xef\xbb\xbfdef main():\n    return 1\n";
    assert_outcome(
        source,
        TIME,
        &[],
        "invalid program: <codemode>:1:1: unexpected input character '\\ufeff'",
    );
}

/// A program of exactly `len` bytes (a comment pads it).
fn sized(len: usize) -> Vec<u8> {
    let mut source = b"def main():\n    return 1\n#".to_vec();
    source.resize(len - 1, b'x');
    source.push(b'\n');
    source
}

#[test]
fn sources_at_the_byte_limit() {
    assert_outcome(&sized(65_536), TIME, &[], "{\"result\":1}");
    assert_outcome(&sized(65_537), TIME, &[], LIMIT);
    // Invalid UTF-8 beyond the limit is refused for its size first.
    let mut over = sized(65_537);
    over[30] = 0xff;
    assert_outcome(&over, TIME, &[], LIMIT);
}
