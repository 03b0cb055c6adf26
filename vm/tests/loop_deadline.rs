//! The wall-time budget holds across many calls of builtins and operators
//! that each do much work: every program below calls one of them in an
//! endless loop, on an input that takes from a fraction of a millisecond
//! to tens of milliseconds per call, and must end in the time limit with
//! the deadline overrun by at most 10% (plus a small margin for a loaded
//! machine) in the best of a few attempts. The interpreter looks at the
//! clock only between batches of instructions, so these bounds hold only
//! if the builtins charge their work as it is done.

mod common;

use codemode_vm::Limits;
use common::assert_time_limit_within;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_millis(300);

/// Scheduling slack on top of the 10%: a shared two-core machine may
/// deschedule the thread for a few milliseconds right at the deadline, and
/// freeing a large arena after the limit takes a little time too.
const MARGIN: Duration = Duration::from_millis(15);

/// Attempts per program: noise on a shared machine only ever adds time,
/// so the bound must hold in at least one attempt (and every attempt must
/// end in the time limit; `sorted` may refuse a sort it cannot finish a
/// little before the deadline).
const ATTEMPTS: usize = 8;

/// Runs `body` (one line) in an endless loop after the `setup` lines under
/// the deadline, and checks the outcome and the overrun (an optimized
/// build copies fast enough that the programs that allocate per call may
/// exhaust the heap before the deadline).
fn assert_loop_times_out(setup: &str, body: &str) {
    let src = format!(
        "def main():\n{setup}    for i in range(1000000000):\n        {body}\n    return 0\n"
    );
    let limits = Limits {
        max_time: DEADLINE,
        max_steps: u64::MAX,
        max_heap_bytes: 1 << 30,
        ..Limits::default()
    };
    let bound = DEADLINE.mul_f64(1.1) + MARGIN;
    assert_time_limit_within(&src, &limits, ATTEMPTS, bound, true, body);
}

/// Two equal lists of `n` ints (`xs`, `ys`) and tuples of them (`t`, `u`).
fn seqs(n: usize) -> String {
    format!(
        "    xs = list(range({n}))\n    ys = list(range({n}))\n    t = tuple(xs)\n    u = tuple(ys)\n"
    )
}

/// Two equal lists of `n` small lists holding a tuple (`a`, `b`), and
/// tuples of them (`ta`, `tb`).
fn nested(n: usize) -> String {
    format!(
        "    a = [[i, (i, 'x')] for i in range({n})]\n    b = [[i, (i, 'x')] for i in range({n})]\n    ta = tuple(a)\n    tb = tuple(b)\n"
    )
}

/// Two equal dicts of `n` int entries (`d`, `e`) and their items (`ps`).
fn dicts(n: usize) -> String {
    format!("    d = {{i: i for i in range({n})}}\n    e = {{i: i for i in range({n})}}\n    ps = d.items()\n")
}

#[test]
fn membership_index_and_count_of_long_sequences() {
    for s in [seqs(1_000_000), seqs(10_000)] {
        assert_loop_times_out(&s, "x = -1 in xs");
        assert_loop_times_out(&s, "x = -1 not in t");
        assert_loop_times_out(&s, "x = xs.index(len(xs) - 1)");
    }
    assert_loop_times_out(&nested(100_000), "x = [-1, (-1, 'x')] in a");
}

#[test]
fn comparison_of_long_lists_and_tuples() {
    for s in [seqs(1_000_000), seqs(10_000)] {
        assert_loop_times_out(&s, "x = xs == ys");
        assert_loop_times_out(&s, "x = xs < ys");
        assert_loop_times_out(&s, "x = t == u");
        assert_loop_times_out(&s, "x = t >= u");
    }
}

#[test]
fn comparison_of_long_nested_lists_and_tuples() {
    let s = nested(200_000);
    assert_loop_times_out(&s, "x = a == b");
    assert_loop_times_out(&s, "x = a <= b");
    assert_loop_times_out(&s, "x = ta != tb");
    assert_loop_times_out(&s, "x = [ta] == [tb]");
}

#[test]
fn slicing_of_long_lists_and_tuples() {
    let s = seqs(200_000);
    assert_loop_times_out(&s, "x = xs[1:]");
    assert_loop_times_out(&s, "x = xs[::2]");
    assert_loop_times_out(&s, "x = xs[::-1]");
    assert_loop_times_out(&s, "x = t[::3]");
    assert_loop_times_out(&s, "x = t[-1:0:-1]");
}

#[test]
fn concatenation_of_long_lists_and_tuples() {
    let s = seqs(200_000);
    assert_loop_times_out(&s, "x = xs + ys");
    assert_loop_times_out(&s, "x = t + u");
    assert_loop_times_out(&s, "x = [1]; x += xs");
    assert_loop_times_out(&s, "x = [1]; x += t");
    assert_loop_times_out(&s, "x = []; x.extend(xs)");
    assert_loop_times_out(&s, "x = []; x.extend(t)");
}

#[test]
fn repetition_of_lists() {
    let s = seqs(200_000);
    assert_loop_times_out(&s, "x = xs * 2");
    assert_loop_times_out(&s, "x = [0] * 200000");
    assert_loop_times_out(&s, "x = 3 * t");
}

#[test]
fn reductions_of_long_inputs() {
    let s = format!(
        "{}    zeros = [0] * 200000\n    ones = [1] * 200000\n",
        seqs(200_000)
    );
    assert_loop_times_out(&s, "x = min(xs)");
    assert_loop_times_out(&s, "x = max(t)");
    assert_loop_times_out(&s, "x = any(zeros)");
    assert_loop_times_out(&s, "x = all(ones)");
    assert_loop_times_out(&s, "x = sum(xs)");
}

#[test]
fn copies_of_long_inputs() {
    let s = seqs(200_000);
    assert_loop_times_out(&s, "x = sorted(xs)");
    assert_loop_times_out(&s, "x = reversed(t)");
    assert_loop_times_out(&s, "x = enumerate(xs)");
    assert_loop_times_out(&s, "x = zip(xs, t)");
    assert_loop_times_out(&s, "x = list(t)");
    assert_loop_times_out(&s, "x = tuple(xs)");
    assert_loop_times_out("", "x = list(range(200000))");
}

#[test]
fn dicts_of_many_entries() {
    let s = dicts(200_000);
    assert_loop_times_out(&s, "x = dict(ps)");
    assert_loop_times_out(&s, "x = dict(d)");
    assert_loop_times_out(&s, "x = {}; x.update(d)");
    assert_loop_times_out(&s, "x = d | e");
    assert_loop_times_out(&s, "x = dict(d); x |= e");
    assert_loop_times_out(&s, "x = d.items()");
    assert_loop_times_out(&s, "x = d.keys()");
    assert_loop_times_out(&s, "x = d.values()");
    assert_loop_times_out(&s, "x = d == e");
}

#[test]
fn json_of_large_values() {
    let s = format!(
        "{}    text = json.encode(xs)\n    long = json.encode('ab' * 500000)\n    escaped = json.encode(['a\\n' * 500000])\n    wide = json.encode('aé' * 333333)\n    spaced = '[' + ' ' * 1000000 + '1]'\n",
        seqs(200_000)
    );
    assert_loop_times_out(&s, "x = json.encode(xs)");
    assert_loop_times_out(&s, "x = json.encode({'k': t})");
    assert_loop_times_out(&s, "x = json.decode(text)");
    assert_loop_times_out(&s, "x = json.decode(long)");
    assert_loop_times_out(&s, "x = json.encode(long)");
    assert_loop_times_out(&s, "x = json.decode(escaped)");
    assert_loop_times_out(&s, "x = json.decode(wide)");
    assert_loop_times_out(&s, "x = json.indent(escaped)");
    assert_loop_times_out(&s, "x = json.decode(spaced)");
    assert_loop_times_out(&s, "x = json.indent(spaced)");
    assert_loop_times_out(&s, "x = json.indent(text)");
    assert_loop_times_out(&s, "x = json.indent(text, indent='        ')");
}

#[test]
fn str_and_repr_of_large_values() {
    let s = format!("{}{}", seqs(200_000), dicts(100_000));
    assert_loop_times_out(&s, "x = str(xs)");
    assert_loop_times_out(&s, "x = repr(t)");
    assert_loop_times_out(&s, "x = repr(d)");
    assert_loop_times_out(&s, "x = '%s' % [xs]");
    assert_loop_times_out("    s = 'ab\\n' * 300000\n", "x = repr(s)");
}

#[test]
fn list_insertion_and_removal_at_the_front() {
    let s = seqs(1_000_000);
    assert_loop_times_out(&s, "xs.insert(0, 1)");
    assert_loop_times_out(&s, "x = xs.pop(0); xs.append(x)");
    assert_loop_times_out(&s, "xs.remove(0); xs.append(0)");
}

#[test]
fn popping_the_first_items_of_a_dict() {
    assert_loop_times_out(&dicts(1_000_000), "x = d.popitem(); d[x[0]] = x[1]");
}

#[test]
fn dict_lookups_with_long_tuple_keys() {
    let s = "    k = tuple(range(200000))\n    j = tuple(range(200000))\n    d = {k: 1}\n";
    assert_loop_times_out(s, "x = d[j]");
    assert_loop_times_out(s, "x = j in d");
    assert_loop_times_out(s, "x = {}; x[j] = 1");
}

#[test]
fn dict_lookups_with_long_string_keys() {
    // Equal texts in distinct objects: each lookup compares them whole.
    for n in [1, 100] {
        let s = format!(
            "    k = 'x' * 32000000\n    j = ('x' * 31999999) + 'x'\n    d = {{str(i): i for i in range({n})}}\n    d[k] = 1\n"
        );
        assert_loop_times_out(&s, "x = d[j]");
        assert_loop_times_out(&s, "x = j in d");
        assert_loop_times_out(&s, "x = d.get(j)");
        assert_loop_times_out(&s, "d[j] = 2");
    }
}

#[test]
fn calls_spreading_long_sequences_and_dicts() {
    let s = "    xs = list(range(1000000))\n    d = {'k%d' % i: i for i in range(100000)}\n    def f(*a, **k):\n        return 0\n";
    assert_loop_times_out(s, "x = f(*xs)");
    assert_loop_times_out(s, "x = f(**d)");
    assert_loop_times_out(s, "x = len(*[xs])");
}
