//! The wall-time budget holds inside long-running builtins: each program
//! below spends nearly all its time inside one builtin call (`list`,
//! `sorted`, `json.encode`, `str.join`, ...) over millions of elements, and
//! must fail with `ResourceLimit(Time)` without overrunning the deadline by
//! more than 10% (plus 2 ms of scheduling slack) in the best of a few
//! attempts. The sizes are such that each call takes well over the
//! deadline in an optimized build too (`list(range(8000000))` and the
//! upper case of 16 MB take under 50 ms there).

mod common;

use codemode_vm::Limits;
use common::assert_time_limit_within;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_millis(50);

/// Attempts per program: scheduling noise on a shared machine only ever
/// adds time, so the overrun bound must hold in at least one attempt (and
/// every attempt must end in the time limit).
const ATTEMPTS: usize = 5;

/// Runs `return EXPR` (after `SETUP` lines) under the short deadline and
/// checks the outcome and the overrun.
fn assert_times_out(setup: &str, expr: &str) {
    let src = format!("def main():\n{setup}    return {expr}\n");
    let limits = Limits {
        max_time: DEADLINE,
        max_steps: u64::MAX,
        max_heap_bytes: 1 << 30,
        ..Limits::default()
    };
    let bound = DEADLINE.mul_f64(1.1) + Duration::from_millis(2);
    assert_time_limit_within(&src, &limits, ATTEMPTS, bound, false, expr);
}

#[test]
fn list_of_a_huge_range() {
    assert_times_out("", "len(list(range(24000000)))");
}

#[test]
fn tuple_and_reversed_of_a_huge_range() {
    assert_times_out("", "len(tuple(range(24000000)))");
    assert_times_out("", "len(reversed(range(24000000)))");
}

#[test]
fn sorted_of_a_huge_range() {
    assert_times_out("", "sorted(range(8000000), reverse=True)[0]");
}

#[test]
fn json_encode_of_a_huge_range() {
    assert_times_out("", "len(json.encode(range(8000000)))");
}

#[test]
fn join_of_many_strings() {
    assert_times_out("    xs = ['ab'] * 8000000\n", "len(','.join(xs))");
}

#[test]
fn string_methods_over_a_huge_string() {
    assert_times_out("    s = 'a b ' * 4000000\n", "len(s.split())");
    assert_times_out("    s = 'ab' * 8000000\n", "len(s.replace('a', 'xy'))");
    assert_times_out("    s = 'ab' * 24000000\n", "len(s.upper())");
}

#[test]
fn json_decode_of_a_huge_text() {
    assert_times_out(
        "    s = '[' + '1,' * 8000000 + '1]'\n",
        "len(json.decode(s))",
    );
}
