//! Integration tests of `execute`: exact budget boundaries, host calls and
//! their conversions, entry-point rules and error classification.

use codemode_vm::{execute, Data, ExecError, Host, HostCall, LimitKind, Limits};
use std::cell::RefCell;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A recorded capability call: its name and keyword arguments.
type Recorded = (String, Vec<(String, Data)>);

/// A host that records calls and answers from a closure.
struct TestHost<F: Fn(&HostCall<'_>) -> Result<Data, String>> {
    answer: F,
    calls: RefCell<Vec<Recorded>>,
}

impl<F: Fn(&HostCall<'_>) -> Result<Data, String>> Host for TestHost<F> {
    type Error = String;
    fn call(&self, call: HostCall<'_>) -> Result<Data, String> {
        self.calls
            .borrow_mut()
            .push((call.name.to_string(), call.args.clone()));
        (self.answer)(&call)
    }
}

fn host<F: Fn(&HostCall<'_>) -> Result<Data, String>>(answer: F) -> TestHost<F> {
    TestHost {
        answer,
        calls: RefCell::new(Vec::new()),
    }
}

fn run(src: &str, limits: &Limits) -> Result<Data, ExecError<String>> {
    let h = host(|_| Ok(Data::Null));
    execute(src, &[], &h, limits, None)
}

fn run_ok(src: &str) -> Data {
    match run(src, &Limits::default()) {
        Ok(d) => d,
        Err(e) => panic!("unexpected error {e:?} for\n{src}"),
    }
}

fn with_steps(n: u64) -> Limits {
    Limits {
        max_steps: n,
        ..Limits::default()
    }
}

/// The fewest steps with which `src` succeeds.
fn steps_needed(src: &str) -> u64 {
    let (mut lo, mut hi) = (0u64, 1u64 << 20);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if run(src, &with_steps(mid)).is_ok() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

#[test]
fn step_limit_is_exact() {
    // Top level: makefunction, storeglobal, return = 3 instructions.
    // main: return = 1 instruction.
    let src = "def main():\n    return 1\n";
    assert_eq!(steps_needed(src), 4);
    assert!(run(src, &with_steps(4)).is_ok());
    assert_eq!(
        run(src, &with_steps(3)),
        Err(ExecError::ResourceLimit(LimitKind::Steps))
    );
    // A loop of n iterations costs a fixed amount per iteration.
    let loop_src = |n: u32| {
        format!("def main():\n    t = 0\n    for i in range({n}):\n        t += i\n    return t\n")
    };
    let a = steps_needed(&loop_src(10));
    let b = steps_needed(&loop_src(20));
    let c = steps_needed(&loop_src(30));
    assert_eq!(b - a, c - b);
    assert_eq!((b - a) % 10, 0);
    assert!(run(&loop_src(1000), &with_steps(steps_needed(&loop_src(1000)))).is_ok());
}

/// Runs `src` with every step limit below `steps` (each must fail with the
/// step limit) and with `steps` (which must give `want`).
fn assert_exact_steps(src: &str, steps: u64, want: Data) {
    assert_eq!(run(src, &with_steps(steps)), Ok(want), "{src}");
    for n in 0..steps {
        assert_eq!(
            run(src, &with_steps(n)),
            Err(ExecError::ResourceLimit(LimitKind::Steps)),
            "{n} steps: {src}"
        );
    }
}

#[test]
fn step_limit_is_exact_at_every_instruction_of_loops_and_branches() {
    // One step per instruction, also where the interpreter runs a
    // comparison and the conditional jump after it together: every limit
    // below the total stops it, wherever it falls. Top level 3; main: 5
    // before the loop (`range`'s argument is an operand of its call), 11 `fornext`, 5 x (lt, jumpiffalse, inplaceadd,
    // jump), 4 x (lt, jumpiffalse, ne, jumpiffalse, inplaceadd), 1 x (lt,
    // jumpiffalse, ne, jumpiffalse), then iterend and return.
    let src = "def main():\n    t = 0\n    for i in range(10):\n        if i < 5:\n            t += 1\n        elif i != 7:\n            t += 10\n    return t\n";
    assert_exact_steps(src, 3 + 5 + 11 + 5 * 4 + 4 * 5 + 4 + 2, Data::Int(45));
}

#[test]
fn step_limit_is_exact_at_every_instruction_of_calls_and_returns() {
    // Top level 5; main: 5 before the loop, 6 `fornext`, 5 x (loadglobal,
    // call — its arguments are locals it reads itself — and in `add`: add,
    // return), then iterend and return.
    let src = "def add(a, b):\n    return a + b\n\ndef main():\n    t = 0\n    for i in range(5):\n        t = add(t, i)\n    return t\n";
    assert_exact_steps(src, 5 + 5 + 6 + 5 * 4 + 2, Data::Int(10));
}

#[test]
fn int_fast_paths_hand_their_edge_cases_to_the_general_ones() {
    // Overflow into big ints, floored division and modulo, mixed-type
    // comparisons and list and tuple loops, all in registers of `main`.
    let src = r#"
def main():
    x = 9223372036854775807
    y = -9223372036854775808
    out = []
    for i in range(2):
        out.append(str(x + i))
    out += [str(x * 2), str(y - 1), str(-y), str(y // -1), str(y % -1)]
    a, b, c = 7, -7, -2
    out += [str(a // c), str(b % 3), str(a % -3), str(b // 2)]
    n = 0
    for v in [1, 2.5, 3, "a"]:
        if v == 3:
            n += 100
        elif v != 1:
            n += 1
    for v in (1, 2):
        n += v
    if n < 105.5:
        n += 1000
    return out + [n]
"#;
    let strs = [
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551614",
        "-9223372036854775809",
        "9223372036854775808",
        "9223372036854775808",
        "0",
        "-4",
        "2",
        "-2",
        "-4",
    ];
    let mut want: Vec<Data> = strs.iter().map(|s| Data::Str(s.to_string())).collect();
    want.push(Data::Int(1105));
    assert_eq!(run_ok(src), Data::List(want));
}

#[test]
fn result_depth_limit_is_inclusive() {
    let limits = |d| Limits {
        max_value_depth: d,
        ..Limits::default()
    };
    assert_eq!(
        run("def main():\n    return 1\n", &limits(1)),
        Ok(Data::Int(1))
    );
    assert!(run("def main():\n    return [1]\n", &limits(2)).is_ok());
    assert_eq!(
        run("def main():\n    return [[1]]\n", &limits(2)),
        Err(ExecError::ResourceLimit(LimitKind::ValueDepth))
    );
    assert!(run("def main():\n    return {\"a\": (1, [2])}\n", &limits(4)).is_ok());
    assert_eq!(
        run("def main():\n    return {\"a\": (1, [2])}\n", &limits(3)),
        Err(ExecError::ResourceLimit(LimitKind::ValueDepth))
    );
}

#[test]
fn result_byte_limit_is_inclusive() {
    // "abc" encodes as 5 bytes.
    let limits = |b| Limits {
        max_value_bytes: b,
        ..Limits::default()
    };
    let src = "def main():\n    return \"abc\"\n";
    assert!(run(src, &limits(5)).is_ok());
    assert_eq!(
        run(src, &limits(4)),
        Err(ExecError::ResourceLimit(LimitKind::ValueBytes))
    );
}

#[test]
fn huge_repetition_fails_without_allocating() {
    let start = Instant::now();
    let r = run(
        "def main():\n    return \"x\" * (1 << 40)\n",
        &Limits::default(),
    );
    assert_eq!(r, Err(ExecError::ResourceLimit(LimitKind::HeapBytes)));
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[test]
fn heap_limit_stops_growing_lists() {
    let limits = Limits {
        max_heap_bytes: 1 << 20,
        max_steps: u64::MAX,
        ..Limits::default()
    };
    let src = "def main():\n    x = []\n    for i in range(10000000):\n        x.append(i)\n    return len(x)\n";
    assert_eq!(
        run(src, &limits),
        Err(ExecError::ResourceLimit(LimitKind::HeapBytes))
    );
}

#[test]
fn printed_text_is_charged_while_it_lives() {
    // A 1 MB string printed five times under an 8 MiB heap: each copy in
    // the heap stays (1 MB each), the text it was copied from is charged
    // only while it lives, so all five fit.
    let limits = Limits {
        max_heap_bytes: 8 << 20,
        ..Limits::default()
    };
    let cases = [
        ("repr(x)", 1_000_002),
        ("str([x])", 1_000_004),
        ("\"%s\" % x", 1_000_000),
        ("\"%r\" % x", 1_000_002),
        ("\"{}\".format(x)", 1_000_000),
        ("\"{!r}\".format(x)", 1_000_002),
        ("json.encode(x)", 1_000_002),
    ];
    for (expr, n) in cases {
        let src = format!(
            "def main():\n    x = \"a\" * 1000000\n    return [len({expr}) for i in range(5)]\n"
        );
        assert_eq!(
            run(&src, &limits).map(|d| d.to_json_string()),
            Ok(format!("[{n},{n},{n},{n},{n}]")),
            "{expr}"
        );
    }
    // Text that, with its copy, would not fit fails before the copy is
    // made: 3 MB of text and 3 MB of copy under 8 MiB with 3 MB in use.
    let src = "def main():\n    x = \"a\" * 3000000\n    return len(repr(x))\n";
    assert_eq!(
        run(src, &limits),
        Err(ExecError::ResourceLimit(LimitKind::HeapBytes))
    );
}

#[test]
fn deadline_stops_an_endless_loop_in_time() {
    let deadline = Duration::from_millis(200);
    let limits = Limits {
        max_time: deadline,
        max_steps: u64::MAX,
        ..Limits::default()
    };
    // Every attempt must end in the time limit, never early; within 10% of
    // the deadline in at least one of a few attempts, since a shared
    // machine's scheduling only ever adds time.
    let mut took = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let r = run(
            "def main():\n    for i in range(1000000000000):\n        pass\n",
            &limits,
        );
        let elapsed = start.elapsed();
        assert_eq!(r, Err(ExecError::ResourceLimit(LimitKind::Time)));
        assert!(elapsed >= deadline, "took {elapsed:?}");
        if elapsed < Duration::from_millis(220) {
            return;
        }
        took.push(elapsed);
    }
    panic!("every attempt overran 220 ms: {took:?}");
}

#[test]
fn cancellation_stops_the_program() {
    let flag = Arc::new(AtomicBool::new(true));
    let h = host(|_| Ok(Data::Null));
    let limits = Limits {
        max_steps: u64::MAX,
        ..Limits::default()
    };
    let r = execute(
        "def main():\n    for i in range(1000000000000):\n        pass\n",
        &[],
        &h,
        &limits,
        Some(flag),
    );
    assert_eq!(r, Err(ExecError::Cancelled));
}

#[test]
fn source_limit_is_checked_first() {
    let limits = Limits {
        max_source_bytes: 10,
        ..Limits::default()
    };
    assert_eq!(
        run("def main():\n    return 1\n", &limits),
        Err(ExecError::ResourceLimit(LimitKind::SourceBytes))
    );
}

#[test]
fn capability_calls_pass_keyword_data_and_convert_results() {
    let h = host(|call| {
        assert_eq!(call.name, "records.lookup");
        Ok(Data::Map(vec![
            ("items".into(), Data::List(vec![Data::Str("alpha".into())])),
            ("n".into(), Data::Int(2)),
            ("score".into(), Data::Float(1.5)),
        ]))
    });
    let src = "def main():\n    r = records.lookup(key=\"a\", limit=2, opts={\"x\": [1, None]})\n    return [r[\"items\"][0], r[\"n\"] + 1, r[\"score\"]]\n";
    let r = execute(
        src,
        &["records.lookup", "records.status"],
        &h,
        &Limits::default(),
        None,
    );
    assert_eq!(
        r,
        Ok(Data::List(vec![
            Data::Str("alpha".into()),
            Data::Int(3),
            Data::Float(1.5)
        ]))
    );
    let calls = h.calls.borrow();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].1,
        vec![
            ("key".to_string(), Data::Str("a".into())),
            ("limit".to_string(), Data::Int(2)),
            (
                "opts".to_string(),
                Data::Map(vec![(
                    "x".into(),
                    Data::List(vec![Data::Int(1), Data::Null])
                )])
            ),
        ]
    );
}

/// A host row: a map with the given keys, each holding `base` plus its
/// position.
fn row(keys: &[&str], base: i64) -> Data {
    Data::Map(
        keys.iter()
            .enumerate()
            .map(|(i, k)| (k.to_string(), Data::Int(base + i as i64)))
            .collect(),
    )
}

#[test]
fn rows_of_host_data_are_separate_dicts_whatever_keys_they_share() {
    // Rows that repeat their predecessor's keys share its key strings and
    // index; rows with other keys, other orders, fewer or more keys,
    // duplicate keys, and non-map items between them, do not. Each row
    // must still be its own dict with its own values.
    let wide: Vec<String> = (0..12).map(|i| format!("k{i}")).collect();
    let wide: Vec<&str> = wide.iter().map(String::as_str).collect();
    let h = host(move |_| {
        Ok(Data::List(vec![
            row(&["a", "b"], 0),
            row(&["a", "b"], 10),
            row(&["b", "a"], 20),
            row(&["b", "a"], 30),
            row(&["a"], 40),
            row(&["a", "b", "c"], 50),
            Data::Map(vec![
                ("a".into(), Data::Int(60)),
                ("a".into(), Data::Int(61)),
            ]),
            Data::Map(vec![
                ("a".into(), Data::Int(70)),
                ("a".into(), Data::Int(71)),
            ]),
            Data::Int(80),
            row(&["a", "b"], 90),
            row(&wide, 100),
            row(&wide, 200),
            row(&wide, 300),
        ]))
    });
    let src = r#"
def main():
    rows = records.lookup()
    rows[1]["a"] = "changed"
    rows[1]["z"] = "added"
    rows[12].pop("k3")
    out = [sorted(r.items()) if type(r) == "dict" else r for r in rows]
    wide = [r.get("k11") for r in rows[10:]] + [r.get("k3") for r in rows[10:]]
    order = [list(r.keys()) for r in rows[:8]]
    return [out[:10], wide, order, [len(r) for r in rows[10:]]]
"#;
    let got = execute(src, &["records.lookup"], &h, &Limits::default(), None)
        .expect("runs")
        .to_json_string();
    assert_eq!(
        got,
        concat!(
            r#"[[[["a",0],["b",1]],[["a","changed"],["b",11],["z","added"]],"#,
            r#"[["a",21],["b",20]],[["a",31],["b",30]],[["a",40]],"#,
            r#"[["a",50],["b",51],["c",52]],[["a",61]],[["a",71]],80,[["a",90],["b",91]]],"#,
            r#"[111,211,311,103,203,null],"#,
            r#"[["a","b"],["a","b","z"],["b","a"],["b","a"],["a"],["a","b","c"],["a"],["a"]],"#,
            r#"[12,12,11]]"#
        )
    );
}

#[test]
fn capability_calls_are_refused_at_top_level() {
    let h = host(|_| Ok(Data::Null));
    let src = "x = records.status()\ndef main():\n    return x\n";
    let r = execute(src, &["records.status"], &h, &Limits::default(), None);
    match r {
        Err(ExecError::InvalidProgram(d)) => assert!(d.starts_with("<codemode>:1:19: "), "{d}"),
        other => panic!("{other:?}"),
    }
    assert!(h.calls.borrow().is_empty());
}

#[test]
fn positional_capability_arguments_are_a_binding_error() {
    let h = host(|_| Ok(Data::Null));
    let src = "def main():\n    return records.lookup(\"a\")\n";
    let r = execute(src, &["records.lookup"], &h, &Limits::default(), None);
    assert!(matches!(r, Err(ExecError::InvalidArguments(_))), "{r:?}");
    assert!(h.calls.borrow().is_empty());
}

#[test]
fn native_call_budget_counts_calls() {
    let h = host(|_| Ok(Data::Int(1)));
    let limits = Limits {
        max_native_calls: 3,
        ..Limits::default()
    };
    let src = |n| {
        format!("def main():\n    t = 0\n    for i in range({n}):\n        t += ns.one()\n    return t\n")
    };
    assert_eq!(
        execute(&src(3), &["ns.one"], &h, &limits, None),
        Ok(Data::Int(3))
    );
    assert_eq!(
        execute(&src(4), &["ns.one"], &h, &limits, None),
        Err(ExecError::ResourceLimit(LimitKind::NativeCalls))
    );
}

#[test]
fn intermediate_bytes_are_charged_even_when_unused() {
    // Each result "xxxxxxxx" encodes as 10 bytes.
    let h = host(|_| Ok(Data::Str("xxxxxxxx".into())));
    let limits = Limits {
        max_intermediate_bytes: 30,
        ..Limits::default()
    };
    let src =
        |n| format!("def main():\n    for i in range({n}):\n        ns.get()\n    return 0\n");
    assert_eq!(
        execute(&src(3), &["ns.get"], &h, &limits, None),
        Ok(Data::Int(0))
    );
    assert_eq!(
        execute(&src(4), &["ns.get"], &h, &limits, None),
        Err(ExecError::ResourceLimit(LimitKind::IntermediateBytes))
    );
}

#[test]
fn host_errors_pass_through_unchanged() {
    let h = host(|_| Err("boom".to_string()));
    let r = execute(
        "def main():\n    return ns.f()\n",
        &["ns.f"],
        &h,
        &Limits::default(),
        None,
    );
    assert_eq!(r, Err(ExecError::Host("boom".to_string())));
}

#[test]
fn host_results_over_the_limits_fail() {
    let deep = host(|_| Ok(Data::List(vec![Data::List(vec![Data::Int(1)])])));
    let limits = Limits {
        max_value_depth: 2,
        ..Limits::default()
    };
    assert_eq!(
        execute(
            "def main():\n    ns.f()\n    return 1\n",
            &["ns.f"],
            &deep,
            &limits,
            None
        ),
        Err(ExecError::ResourceLimit(LimitKind::ValueDepth))
    );
}

#[test]
fn namespaces_support_attribute_access_and_nesting() {
    let h = host(|call| Ok(Data::Str(call.name.to_string())));
    let src = "def main():\n    return [github.pulls.create(), github.issues.list()]\n";
    let r = execute(
        src,
        &["github.pulls.create", "github.issues.list"],
        &h,
        &Limits::default(),
        None,
    );
    assert_eq!(
        r,
        Ok(Data::List(vec![
            Data::Str("github.pulls.create".into()),
            Data::Str("github.issues.list".into())
        ]))
    );
}

#[test]
fn main_must_exist_and_take_no_parameters() {
    for src in [
        "x = 1\n",
        "def main(x):\n    return x\n",
        "main = 1\n",
        "def main(*args):\n    return 1\n",
    ] {
        assert!(
            matches!(
                run(src, &Limits::default()),
                Err(ExecError::InvalidProgram(_))
            ),
            "{src}"
        );
    }
}

#[test]
fn results_must_be_json_representable() {
    for src in [
        "def main():\n    return 1 << 64\n",
        "def main():\n    return float(\"nan\")\n",
        "def main():\n    return {1: 2}\n",
        "def main():\n    return main\n",
    ] {
        assert!(
            matches!(
                run(src, &Limits::default()),
                Err(ExecError::InvalidProgram(_))
            ),
            "{src}"
        );
    }
}

#[test]
fn runtime_errors_carry_positions() {
    // Expected text from starlark-go.
    assert_eq!(
        run(
            "def main():\n    x = [1]\n    return x[5]\n",
            &Limits::default()
        ),
        Err(ExecError::InvalidProgram(
            "<codemode>:3:13: list index 5 out of range [-1:0]".into()
        ))
    );
}

#[test]
fn closures_and_frozen_globals() {
    let src = "def make(n):\n    def add(x):\n        return x + n\n    return add\nadd2 = make(2)\ndef main():\n    return [add2(1), make(10)(5)]\n";
    assert_eq!(run_ok(src), Data::List(vec![Data::Int(3), Data::Int(15)]));
}

#[test]
fn deeply_nested_values_never_overflow_the_stack() {
    // 100,000 levels of nesting built at run time, then pushed through
    // every recursive operation; each must end in a value or a classified
    // error (this test runs on a default 2 MiB test thread).
    let limits = Limits {
        max_steps: u64::MAX,
        ..Limits::default()
    };
    let build = "    x = []\n    for i in range(100000):\n        x = [x]\n    t = ()\n    for i in range(100000):\n        t = (t,)\n";
    for (expr, want_ok) in [
        ("len(str(x))", true),
        ("len(repr(t))", true),
        ("x == x", false),
        ("t == t", false),
        ("len(json.encode(x))", false),
        ("hash(t)", false),
        ("{t: 1}[t]", false),
        ("x", false),
        ("sorted([x, x])[0] == x", false),
    ] {
        let src = format!("def main():\n{build}    return {expr}\n");
        let r = run(&src, &limits);
        match (&r, want_ok) {
            (Ok(_), true) => {}
            (Err(ExecError::InvalidProgram(_)) | Err(ExecError::ResourceLimit(_)), false) => {}
            _ => panic!("{expr}: {r:?}"),
        }
    }
}

#[test]
fn programs_at_the_nesting_limit_compile_and_run() {
    // The parser admits expressions up to its nesting limit; the compiler
    // recurses over them, so the deepest admitted program must compile and
    // run on a default test thread's stack (even in a debug build).
    let limits = Limits::default();
    for depth in [90usize, 195] {
        let lists = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let sums = format!("{}1{}", "(1 + ".repeat(depth), ")".repeat(depth));
        let conds = format!("{}0", "1 if x else ".repeat(depth));
        for expr in [lists, sums, conds] {
            let src = format!("def main():\n    x = True\n    y = {expr}\n    return 1\n");
            let r = run(&src, &limits);
            // Below the limit the program must run; near it the parser may
            // refuse it, but nothing may crash.
            if depth <= 90 {
                assert_eq!(r, Ok(Data::Int(1)), "depth {depth}");
            } else {
                assert!(
                    matches!(r, Ok(Data::Int(1)) | Err(ExecError::InvalidProgram(_))),
                    "depth {depth}: {r:?}"
                );
            }
        }
    }
}

#[test]
fn constants_are_shared_and_kept_apart_past_the_scanned_list() {
    // The compiler shares equal constants of a function: through a short
    // list for the first ones, a hash table past it. Each constant appears
    // twice, and 1, 1.0, "1" and -1 stay distinct.
    let mut items = Vec::new();
    for i in 0..40 {
        items.push(format!("\"s{i}\", {i}, {i}.5, \"s{i}\", {i}, {i}.5"));
    }
    items.push("1, 1.0, \"1\", -1, -1.0, 1, 1.0, \"1\", -1, -1.0".into());
    let src = format!("def main():\n    return [{}]\n", items.join(", "));
    let mut want = Vec::new();
    for i in 0..40 {
        for _ in 0..2 {
            want.push(Data::Str(format!("s{i}")));
            want.push(Data::Int(i));
            want.push(Data::Float(i as f64 + 0.5));
        }
    }
    for _ in 0..2 {
        want.extend([
            Data::Int(1),
            Data::Float(1.0),
            Data::Str("1".into()),
            Data::Int(-1),
            Data::Float(-1.0),
        ]);
    }
    assert_eq!(run(&src, &Limits::default()).unwrap(), Data::List(want));
}

#[test]
fn decoded_records_share_their_keys() {
    // 5,000 records of eight keys: each key is one string for all of
    // them, made once. With a string per key per record the decode needs
    // 6.66 MB of heap (24 bytes more per key); shared, 5.70 MB.
    let limits = Limits {
        max_heap_bytes: 6_200_000,
        ..Limits::default()
    };
    let src = "TEXT = json.encode([{\"alpha\": i, \"bravo\": i, \"charlie\": i, \"delta\": i, \
               \"echo\": i, \"foxtrot\": i, \"golf\": i, \"hotel\": i} for i in range(5000)])\n\
               def main():\n    \
                   records = json.decode(TEXT)\n    \
                   return [len(records), records[4999][\"hotel\"], sorted(records[7].keys())]\n";
    let keys = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];
    assert_eq!(
        run(src, &limits),
        Ok(Data::List(vec![
            Data::Int(5000),
            Data::Int(4999),
            Data::List(keys.iter().map(|k| Data::Str(k.to_string())).collect()),
        ]))
    );
}
