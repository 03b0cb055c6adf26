//! The deadline holds while a program calls a string builtin or operator
//! over and over on a long string: each call does work that grows with the
//! string (milliseconds of it in an unoptimized build), far more than the
//! interpreter's batch of steps between two looks at the clock accounts
//! for, so only the builtin's own work charging (`Budget::charge_work`)
//! can stop it in time. Each program must fail with the time limit, and
//! in the best of a few attempts end within 10% of the 300 ms deadline
//! plus a margin for a loaded machine. Before the work was charged, such
//! loops overran by 2.5x to 6x (`count` on 10 MB: 1,708 ms).

mod common;

use codemode_vm::Limits;
use common::assert_time_limit_within;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_millis(300);

/// Attempts per program: scheduling noise on a shared machine only ever
/// adds time, so the bound must hold in at least one attempt (and every
/// attempt must end in the time limit).
const ATTEMPTS: usize = 5;

/// Scheduling slack on top of the 10% allowed overrun: on a 2-core
/// machine at a load of 10 to 15, a runnable thread waits tens of
/// milliseconds for a core. Without the work charging these loops overran
/// by 0.3 s to over 50 s in an unoptimized build, far beyond it.
const MARGIN: Duration = Duration::from_millis(50);

/// Runs `SETUP` lines, then `n += len(str(EXPR))`-style work in a loop
/// (`BODY` is one statement inside the loop), under the deadline.
fn assert_loop_times_out(setup: &str, body: &str) {
    let src = format!(
        "def main():\n    n = 0\n{setup}    for i in range(1000000):\n        {body}\n    return n\n"
    );
    let limits = Limits {
        max_time: DEADLINE,
        max_steps: 100_000_000,
        max_heap_bytes: 1 << 30,
        ..Limits::default()
    };
    let bound = DEADLINE.mul_f64(1.1) + MARGIN;
    assert_time_limit_within(&src, &limits, ATTEMPTS, bound, false, body);
}

/// A 10 MB string of "ab" pairs, built quickly.
const TEN_MB: &str = "    s = ('ab' * 1000) * 5000\n";

#[test]
fn count_find_and_in() {
    assert_loop_times_out(TEN_MB, "n += s.count('ba')");
    assert_loop_times_out(TEN_MB, "n += s.find('c')");
    assert_loop_times_out(TEN_MB, "n += s.rfind('c')");
    assert_loop_times_out(TEN_MB, "n += s.find('ac', 1)");
    assert_loop_times_out(TEN_MB, "n += s.count('')");
    assert_loop_times_out(TEN_MB, "n += int('bc' in s)");
}

#[test]
fn index_family_and_partition() {
    assert_loop_times_out(
        &format!("{TEN_MB}    s = s + 'c'\n"),
        "n += s.index('c') + s.rindex('ab')",
    );
    assert_loop_times_out(TEN_MB, "n += len(s.partition('c'))");
    assert_loop_times_out(TEN_MB, "n += len(s.rpartition('c'))");
}

#[test]
fn replace() {
    assert_loop_times_out(
        "    s = ('ab' * 1000) * 1500\n",
        "n += len(s.replace('b', 'd'))",
    );
    assert_loop_times_out(TEN_MB, "n += len(s.replace('c', 'd'))");
    assert_loop_times_out("    s = 'ab' * 20000\n", "n += len(s.replace('', '-'))");
}

#[test]
fn split_family() {
    assert_loop_times_out(TEN_MB, "n += len(s.split('c'))");
    assert_loop_times_out(TEN_MB, "n += len(s.rsplit('c', 1))");
    assert_loop_times_out(TEN_MB, "n += len(s.splitlines())");
    assert_loop_times_out(TEN_MB, "n += len(s.split())");
    assert_loop_times_out(TEN_MB, "n += len(s.rsplit(None, 1))");
}

#[test]
fn strip_family() {
    let spaces = "    s = (' ' * 1000) * 10000 + 'x'\n";
    assert_loop_times_out(spaces, "n += len(s.strip())");
    assert_loop_times_out(spaces, "n += len(s.lstrip(' '))");
    assert_loop_times_out(
        "    s = 'x' + (' ' * 1000) * 10000\n",
        "n += len(s.rstrip())",
    );
    // A long set of characters to strip: each character of `s` is looked
    // up in it, not compared with all of it (one call of that took
    // 40 billion comparisons).
    let long_set = "    s = 'a' * 200000\n    t = 'b' * 200000 + 'a'\n";
    assert_loop_times_out(long_set, "n += len(s.strip(t))");
    let long_other_set = "    s = 'é' * 200000\n    t = 'ü' * 200000 + 'é'\n";
    assert_loop_times_out(long_other_set, "n += len(s.rstrip(t))");
}

#[test]
fn prefix_tests_and_comparisons() {
    let pair = "    t = s[:-1] + 'c'\n";
    let setup = format!("{TEN_MB}{pair}");
    assert_loop_times_out(&setup, "n += int(s.startswith(t))");
    assert_loop_times_out(&setup, "n += int(s.endswith(t[1:]))");
    assert_loop_times_out(&setup, "n += int(s.removeprefix(t) == s)");
    assert_loop_times_out(&setup, "n += int(s == t)");
    assert_loop_times_out(&setup, "n += int(s < t)");
    assert_loop_times_out(&setup, "n += len(sorted([t, s]))");
}

#[test]
fn hashing_long_keys() {
    let setup = format!("{TEN_MB}    t = s[:-1] + 'c'\n    d = {{t: 1}}\n");
    assert_loop_times_out(&setup, "n += d.get(s, 0)");
    assert_loop_times_out(&setup, "n += int(s in d)");
}

#[test]
fn case_mappings() {
    let text = "    s = ('é' * 1000) * 500\n";
    assert_loop_times_out(text, "n += len(s.upper())");
    assert_loop_times_out(text, "n += len(s.title())");
    assert_loop_times_out(text, "n += int(s.isalpha())");
    assert_loop_times_out(text, "n += int(s.islower())");
    // Title-cased words: istitle reads all of it (on 'é' it stops at once).
    assert_loop_times_out("    s = ('Ab ' * 1000) * 300\n", "n += int(s.istitle())");
    // ASCII text with nothing to change: scanned, then given back as it is.
    assert_loop_times_out(TEN_MB, "n += len(s.lower())");
    assert_loop_times_out("    s = ('AB' * 1000) * 5000\n", "n += len(s.upper())");
    // A string of spaces: isspace reads all of it (on 'é' it stops at once).
    assert_loop_times_out("    s = (' ' * 1000) * 1000\n", "n += int(s.isspace())");
}

#[test]
fn element_views_and_slices() {
    assert_loop_times_out(
        "    s = ('é' * 1000) * 500\n",
        "n += len(list(s.codepoint_ords()))",
    );
    assert_loop_times_out(TEN_MB, "n += len(s[::2])");
    assert_loop_times_out(TEN_MB, "n += len(s[::-3])");
    assert_loop_times_out(TEN_MB, "n += len(list(s.elem_ords()))");
}

#[test]
fn join_percent_and_format() {
    let many = "    xs = ['a'] * 100000\n    f = '%s' * 100000\n    g = '{}' * 100000\n    tx = tuple(xs)\n";
    assert_loop_times_out(many, "n += len(','.join(xs))");
    assert_loop_times_out(many, "n += len(f % tx)");
    assert_loop_times_out(many, "n += len(g.format(*xs))");
}
