//! Executions that stop at capability calls: each call comes out as a
//! step, the execution resumes where it stopped with the same results,
//! errors and step counts as `execute`, it can move to another thread
//! while paused, and dropping it gives its memory back at once.

use codemode_vm::{
    execute_with, Capabilities, CapabilityCall, Data, ExecError, Execution, HeapTotal, Host,
    HostCall, LimitKind, Limits, Step,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The answer every test host gives: `{"v": n * 10}` for `n=`.
fn answer(name: &str, args: &[(String, Data)]) -> Result<Data, String> {
    match args {
        [(k, Data::Int(n))] if k == "n" => Ok(Data::Map(vec![("v".into(), Data::Int(n * 10))])),
        _ => Err(format!("{name}: bad arguments")),
    }
}

struct Sync;

impl Host for Sync {
    type Error = String;
    fn call(&self, call: HostCall<'_>) -> Result<Data, String> {
        answer(call.name, &call.args)
    }
}

fn caps() -> Capabilities {
    Capabilities::new(["t.get", "t.fail"])
}

/// Runs `src` step by step, answering each call; returns the calls seen
/// and the outcome.
fn drive(src: &str, limits: Limits) -> (Vec<CapabilityCall>, Result<Data, ExecError<String>>) {
    drive_releasing(src, limits, false)
}

/// [`drive`], giving back the stack below each pause first when
/// `release` (as the service does when a call waits).
fn drive_releasing(
    src: &str,
    limits: Limits,
    release: bool,
) -> (Vec<CapabilityCall>, Result<Data, ExecError<String>>) {
    let caps = caps();
    let mut execution: Execution<'_, String> = Execution::new(src, &caps, limits, None);
    let mut calls = Vec::new();
    let mut step = execution.resume(None);
    loop {
        match step {
            Step::Done(result) => return (calls, result),
            Step::Call(call) => {
                assert!(execution.is_paused());
                if release {
                    execution.release_stack();
                    assert!(execution.is_paused());
                }
                let reply = answer(&call.name, &call.args);
                calls.push(call);
                step = execution.resume(Some((reply, Duration::ZERO)));
            }
        }
    }
}

const PROGRAM: &str = r#"
def twice(n):
    return t.get(n=n)["v"] * 2

def main():
    out = []
    for i in range(3):
        out.append(twice(i))
    # A call made while `sorted` has called back into Starlark.
    ranked = sorted([3, 1, 2], key=lambda n: -t.get(n=n)["v"])
    # A dict built by a loop whose calls pause it.
    seen = {}
    for x in [1, 10]:
        seen[str(x)] = t.get(n=x)["v"]
    return {"out": out, "ranked": ranked, "seen": seen}
"#;

#[test]
fn every_call_pauses_and_the_result_is_executes() {
    let (calls, result) = drive(PROGRAM, Limits::default());
    let names: Vec<_> = calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["t.get"; 8]);
    let ns: Vec<_> = calls.iter().map(|c| c.args[0].1.clone()).collect();
    let expect: Vec<_> = [0, 1, 2, 3, 1, 2, 1, 10]
        .into_iter()
        .map(Data::Int)
        .collect();
    assert_eq!(ns, expect);
    let sync = execute_with(PROGRAM, &caps(), &Sync, &Limits::default(), None);
    assert_eq!(result, sync);
    let ints = |v: &[i64]| Data::List(v.iter().map(|&i| Data::Int(i)).collect());
    assert_eq!(
        result.unwrap(),
        Data::Map(vec![
            ("out".into(), ints(&[0, 20, 40])),
            ("ranked".into(), ints(&[3, 2, 1])),
            (
                "seen".into(),
                Data::Map(vec![
                    ("1".into(), Data::Int(10)),
                    ("10".into(), Data::Int(100)),
                ])
            ),
        ])
    );
}

#[test]
fn giving_the_stack_back_at_every_pause_changes_no_result() {
    let kept = drive(PROGRAM, Limits::default());
    assert_eq!(drive_releasing(PROGRAM, Limits::default(), true), kept);
    // Collections between the pauses, and a step limit that falls at the
    // same instruction.
    let churn = "def main():\n    keep = []\n    for i in range(40):\n        \
                 s = [str(j) for j in range(20000)]\n        \
                 keep.append(t.get(n=i)[\"v\"] + len(s))\n    return sum(keep)\n";
    let roomy = Limits {
        max_steps: 100_000_000,
        ..Limits::default()
    };
    for limits in [
        roomy.clone(),
        Limits {
            max_steps: 200_000,
            ..Limits::default()
        },
    ] {
        let kept = drive(churn, limits.clone());
        assert_eq!(drive_releasing(churn, limits, true), kept);
    }
    assert_eq!(
        drive(churn, roomy).1,
        Ok(Data::Int(10 * 39 * 40 / 2 + 40 * 20000))
    );
}

#[test]
fn giving_the_stack_back_keeps_only_the_pages_of_the_paused_frames() {
    // The parser's recursion over nested parentheses reaches deep into
    // the stack before the program runs.
    let nested = format!(
        "def main():\n    x = {}1{}\n    return t.get(n=x)[\"v\"]\n",
        "(".repeat(60),
        ")".repeat(60)
    );
    let caps = caps();
    let mut execution: Execution<'_, String> =
        Execution::new(nested.as_str(), &caps, Limits::default(), None);
    assert_eq!(execution.resident_stack_bytes(), None, "not paused yet");
    let Step::Call(call) = execution.resume(None) else {
        panic!("no call")
    };
    let before = execution.resident_stack_bytes().expect("a paused stack");
    execution.release_stack();
    let after = execution.resident_stack_bytes().expect("a paused stack");
    assert!(after < before, "{after} of {before} bytes");
    // An optimized build pauses within the stack's first page.
    if cfg!(not(debug_assertions)) {
        assert_eq!(after, 4096, "{before} bytes before");
    }
    let reply = answer(&call.name, &call.args);
    let Step::Done(result) = execution.resume(Some((reply, Duration::ZERO))) else {
        panic!("a second call")
    };
    assert_eq!(result, Ok(Data::Int(10)));
    assert_eq!(execution.resident_stack_bytes(), None, "ended");
    execution.release_stack();
}

#[test]
fn step_limits_fall_at_the_same_instruction() {
    // The fewest steps `execute` needs; paused runs succeed with exactly
    // those and fail with one fewer, like `execute`.
    let with = |n| Limits {
        max_steps: n,
        ..Limits::default()
    };
    let (mut lo, mut hi) = (0u64, 100_000u64);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if execute_with(PROGRAM, &caps(), &Sync, &with(mid), None).is_ok() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    assert!(drive(PROGRAM, with(hi)).1.is_ok());
    assert_eq!(
        drive(PROGRAM, with(hi - 1)).1,
        Err(ExecError::ResourceLimit(LimitKind::Steps))
    );
}

#[test]
fn a_host_error_and_a_runtime_error_come_back_as_execute_gives_them() {
    let src = "def main():\n    return t.get(n = \"x\")\n";
    assert_eq!(
        drive(src, Limits::default()).1,
        Err(ExecError::Host("t.get: bad arguments".into()))
    );
    let src = "def main():\n    x = t.get(n = 1)\n    return x[\"nope\"]\n";
    let (calls, result) = drive(src, Limits::default());
    assert_eq!(calls.len(), 1);
    assert_eq!(
        result,
        Err(ExecError::InvalidProgram(
            "<codemode>:3:13: key \"nope\" not in dict".into()
        ))
    );
}

#[test]
fn a_paused_execution_moves_to_another_thread() {
    let caps = Arc::new(caps());
    let source: Arc<str> = PROGRAM.into();
    let mut execution: Execution<'static, String> =
        Execution::new(source, caps.clone(), Limits::default(), None);
    let mut step = execution.resume(None);
    let mut hops = 0;
    let result = loop {
        match step {
            Step::Done(result) => break result,
            Step::Call(call) => {
                // Each reply is given on a new thread.
                let reply = answer(&call.name, &call.args);
                let (moved, next) = std::thread::spawn(move || {
                    let next = execution.resume(Some((reply, Duration::ZERO)));
                    (execution, next)
                })
                .join()
                .unwrap();
                execution = moved;
                step = next;
                hops += 1;
            }
        }
    };
    assert_eq!(hops, 8);
    assert_eq!(
        result,
        execute_with(PROGRAM, &caps, &Sync, &Limits::default(), None)
    );
}

#[test]
fn dropping_a_paused_execution_gives_its_heap_back() {
    let total = Arc::new(HeapTotal::new(64 << 20));
    let caps = caps();
    let src = "def main():\n    x = \"x\" * 1000\n    big = [x + str(i) for i in range(2000)]\n    return t.get(n = len(big))\n";
    let mut execution: Execution<'_, String> =
        Execution::with_heap_total(src, &caps, Limits::default(), None, Some(total.clone()));
    match execution.resume(None) {
        Step::Call(call) => assert_eq!(call.args, vec![("n".into(), Data::Int(2000))]),
        Step::Done(r) => panic!("ended: {r:?}"),
    }
    // The list and its strings (2,000 of about 1 KiB) are held while the
    // call waits.
    let used = total.used();
    assert!((2_000_000..2_600_000).contains(&used), "{used}");
    drop(execution);
    assert_eq!(total.used(), 0);
}

#[test]
fn the_heap_total_bounds_open_executions_together() {
    let total = Arc::new(HeapTotal::new(3 << 20));
    let caps = caps();
    let src = "def main():\n    x = \"x\" * 1000\n    big = [x + str(i) for i in range(2000)]\n    return t.get(n = len(big))\n";
    let mut first: Execution<'_, String> =
        Execution::with_heap_total(src, &caps, Limits::default(), None, Some(total.clone()));
    assert!(matches!(first.resume(None), Step::Call(_)));
    // A second one does not fit beside the paused first.
    let mut second: Execution<'_, String> =
        Execution::with_heap_total(src, &caps, Limits::default(), None, Some(total.clone()));
    match second.resume(None) {
        Step::Done(r) => assert_eq!(r, Err(ExecError::ResourceLimit(LimitKind::HeapBytes))),
        Step::Call(_) => panic!("second execution fit"),
    }
    drop(second);
    // The first goes on and ends normally; then all is given back.
    match first.resume(Some((Ok(Data::Int(7)), Duration::ZERO))) {
        Step::Done(r) => assert_eq!(r, Ok(Data::Int(7))),
        Step::Call(_) => panic!("another call"),
    }
    assert_eq!(total.used(), 0);
}

#[test]
fn time_spent_paused_counts_unless_the_host_says_it_must_not() {
    let src = "def main():\n    return t.get(n = 1)\n";
    let caps = caps();
    let limits = Limits {
        max_time: Duration::from_millis(200),
        ..Limits::default()
    };
    let run = |not_counted: Duration| {
        let mut execution: Execution<'_, String> = Execution::new(src, &caps, limits.clone(), None);
        assert!(matches!(execution.resume(None), Step::Call(_)));
        std::thread::sleep(Duration::from_millis(300));
        match execution.resume(Some((Ok(Data::Int(1)), not_counted))) {
            Step::Done(r) => r,
            Step::Call(_) => panic!("another call"),
        }
    };
    assert_eq!(
        run(Duration::ZERO),
        Err(ExecError::ResourceLimit(LimitKind::Time))
    );
    assert_eq!(run(Duration::from_millis(300)), Ok(Data::Int(1)));
}

#[test]
fn cancelling_while_paused_ends_the_execution_at_the_reply() {
    let src = "def main():\n    t.get(n = 1)\n    return t.get(n = 2)\n";
    let caps = caps();
    let flag = Arc::new(AtomicBool::new(false));
    let mut execution: Execution<'_, String> =
        Execution::new(src, &caps, Limits::default(), Some(flag.clone()));
    assert!(matches!(execution.resume(None), Step::Call(_)));
    flag.store(true, Ordering::Relaxed);
    match execution.resume(Some((Ok(Data::Null), Duration::ZERO))) {
        Step::Done(r) => assert_eq!(r, Err(ExecError::Cancelled)),
        Step::Call(_) => panic!("went on after cancellation"),
    }
}

#[test]
fn steps_out_of_order_end_the_execution_as_an_internal_error() {
    let src = "def main():\n    return t.get(n = 1)\n";
    let caps = caps();
    let internal = |what: &str| {
        Err::<Data, _>(ExecError::<String>::InvalidProgram(format!(
            "internal error: execution {what}"
        )))
    };
    let mut e: Execution<'_, String> = Execution::new(src, &caps, Limits::default(), None);
    match e.resume(Some((Ok(Data::Null), Duration::ZERO))) {
        Step::Done(r) => assert_eq!(r, internal("a reply before the first step")),
        Step::Call(_) => panic!(),
    }
    let mut e: Execution<'_, String> = Execution::new(src, &caps, Limits::default(), None);
    assert!(matches!(e.resume(None), Step::Call(_)));
    match e.resume(None) {
        Step::Done(r) => assert_eq!(r, internal("resumed without a reply")),
        Step::Call(_) => panic!(),
    }
    match e.resume(None) {
        Step::Done(r) => assert_eq!(r, internal("resumed after its end")),
        Step::Call(_) => panic!(),
    }
    // A source over the limit ends at the first step, as in `execute`.
    let long = "#".repeat(Limits::default().max_source_bytes + 1);
    let mut e: Execution<'_, String> = Execution::new(long, &caps, Limits::default(), None);
    match e.resume(None) {
        Step::Done(r) => assert_eq!(r, Err(ExecError::ResourceLimit(LimitKind::SourceBytes))),
        Step::Call(_) => panic!(),
    }
}

#[test]
fn thousands_of_paused_executions_at_once() {
    // Each holds its own stack and heap and nothing else: no thread.
    let caps = caps();
    let src = "def main():\n    a = t.get(n = 1)\n    return a[\"v\"] + t.get(n = 2)[\"v\"]\n";
    let mut open: Vec<Execution<'_, String>> = (0..2000)
        .map(|_| Execution::new(src, &caps, Limits::default(), None))
        .collect();
    for e in &mut open {
        assert!(matches!(e.resume(None), Step::Call(_)));
    }
    for e in &mut open {
        assert!(matches!(
            e.resume(Some((
                answer("t.get", &[("n".into(), Data::Int(1))]),
                Duration::ZERO
            ))),
            Step::Call(_)
        ));
    }
    for e in &mut open {
        match e.resume(Some((
            answer("t.get", &[("n".into(), Data::Int(2))]),
            Duration::ZERO,
        ))) {
            Step::Done(r) => assert_eq!(r, Ok(Data::Int(30))),
            Step::Call(_) => panic!(),
        }
    }
}

/// A program that makes garbage between its calls is collected into the
/// arena the last collection emptied; a host that releases the stack at
/// each pause gives that arena back too. Values and results stay right,
/// released or not, and collections happen between the pauses.
#[test]
fn collections_between_pauses_survive_releasing_the_kept_arena() {
    // Enough garbage per round for a collection (1.5 MiB); under
    // `gc-stress`, which collects at every safe point, less.
    let per: i64 = if cfg!(feature = "gc-stress") {
        300
    } else {
        40000
    };
    let src = r#"
def main():
    total = 0
    keep = []
    for r in range(6):
        n = 0
        for i in range(PER):
            s = "item-" + str(i)
            n += len(s)
        keep.append("r%d" % r)
        total += t.get(n=n)["v"]
    return [total, keep]
"#
    .replace("PER", &per.to_string());
    let per_round: i64 = (0..per).map(|i: i64| 5 + i.to_string().len() as i64).sum();
    let want = Data::List(vec![
        Data::Int(6 * 10 * per_round),
        Data::List((0..6).map(|r| Data::Str(format!("r{r}"))).collect()),
    ]);
    for release in [false, true] {
        let before = codemode_vm::collections_on_this_thread();
        let limits = Limits {
            max_steps: 100_000_000,
            max_time: Duration::from_secs(60),
            ..Limits::default()
        };
        let (calls, result) = drive_releasing(&src, limits, release);
        assert_eq!(calls.len(), 6);
        assert_eq!(result, Ok(want.clone()), "release {release}");
        assert!(
            codemode_vm::collections_on_this_thread() - before >= 6,
            "release {release}"
        );
    }
}
