//! The collector finds every root: a value held in each place the
//! interpreter keeps values survives collections intact, with its sharing,
//! its cycles and its identity (as a dict key). Each program runs twice:
//! under a heap limit small enough that it collects many times while the
//! value is held, and under one so large that it never collects (it
//! allocates less than the first collection waits for); the results must
//! be equal, and the first run must have collected. (Built with the
//! `gc-stress` feature, both runs collect at every safe point.)

use codemode_vm::{
    collections_on_this_thread, execute, execute_with, Capabilities, Data, ExecError, Execution,
    Host, HostCall, LimitKind, Limits, Step,
};
use std::time::Duration;

/// A function that makes garbage: about 200 KiB of strings and lists per
/// call, none of it kept.
const CHURN: &str = r#"
def churn(n = 1):
    for _ in range(n):
        g = [("garbage-" + str(i)) * 4 for i in range(1200)]
        g = None
"#;

struct Caps;

impl Host for Caps {
    type Error = String;
    fn call(&self, call: HostCall<'_>) -> Result<Data, String> {
        // `t.echo(x=...)` returns `{"got": x, "pad": "..."}`.
        let x = call
            .args
            .first()
            .map(|(_, d)| d.clone())
            .unwrap_or(Data::Null);
        Ok(Data::Map(vec![
            ("got".into(), x),
            ("pad".into(), Data::Str("p".repeat(300))),
        ]))
    }
}

fn limits(heap: usize) -> Limits {
    Limits {
        max_heap_bytes: heap,
        max_steps: 1 << 40,
        max_time: Duration::from_secs(120),
        ..Limits::default()
    }
}

/// Runs `body` (with [`CHURN`] defined) and returns its result and the
/// collections it caused.
fn run(body: &str, heap: usize) -> (Result<Data, ExecError<String>>, u64) {
    let src = format!("{CHURN}\n{body}");
    let before = collections_on_this_thread();
    let r = execute(&src, &["t.echo"], &Caps, &limits(heap), None);
    (r, collections_on_this_thread() - before)
}

/// `body` gives the same result collecting often as never collecting,
/// and that result is `want` (JSON).
fn same_with_collections(body: &str, want: &str) {
    same_with_collections_under(body, want, 2 << 20)
}

/// [`same_with_collections`], collecting under a heap limit of `heap`.
fn same_with_collections_under(body: &str, want: &str, heap: usize) {
    let (never, _) = run(body, 1 << 30);
    let never = never.unwrap_or_else(|e| panic!("{e:?}\n{body}"));
    assert_eq!(never.to_json_string(), want, "{body}");
    let (often, n) = run(body, heap);
    let often = often.unwrap_or_else(|e| panic!("{e:?}\n{body}"));
    assert!(n >= 2, "only {n} collections:\n{body}");
    assert_eq!(often, never, "{body}");
}

#[test]
fn registers_keep_their_values() {
    same_with_collections(
        r#"
def main():
    big = 1000000000000000 * 1000000000000000
    a = [1, "two", 3.5, big, b"by"]
    s = "x" * 40
    t = (a, s, {"k": a})
    r = range(3, 30, 4)
    e = "héllo".codepoints()
    churn(30)
    a.append(len(s))
    return [[str(x) for x in a], s, t[0] == a, t[2]["k"][-1], list(r), list(e), str(big + 1)]
"#,
        r#"[["1","two","3.5","1000000000000000000000000000000","by","40"],"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",true,40,[3,7,11,15,19,23,27],["h","é","l","l","o"],"1000000000000000000000000000001"]"#,
    );
}

#[test]
fn frames_of_every_depth_keep_their_locals() {
    same_with_collections(
        r#"
def leaf(d):
    mine = {"d": d, "s": str(d) * 3}
    churn(30)
    return [mine["s"]]

def mid(d):
    mine = [str(d), (d, "m")]
    rest = leaf(d - 1)
    return rest + [mine[0] + mine[1][1]]

def top(d):
    mine = {"t": "top" * d}
    rest = [x for x in mid(d - 1) if not churn()]
    return rest + [len(mine["t"])]

def main():
    return top(4) + (lambda y: y + [str(y)])(["l"])
"#,
        r#"["222","3m",12,"l","[\"l\"]"]"#,
    );
}

#[test]
fn globals_and_the_top_level_keep_their_values() {
    same_with_collections_under(
        r#"
G = {"k": [1, 2], "s": "glob" * 3}
X = [str(i) for i in range(8000)]
H = (G, X[-1])

def main():
    churn(20)
    return [G, X[:3], len(X), H[1], H[0]["k"]]
"#,
        r#"[{"k":[1,2],"s":"globglobglob"},["0","1","2"],8000,"7999",[1,2]]"#,
        4 << 20,
    );
}

#[test]
fn closures_keep_their_cells() {
    same_with_collections(
        r#"
def make():
    c = [0]
    items = {"a": "b" * 5}
    def inc(n = 1):
        c[0] += n
        churn(2)
        return items
    return inc

def main():
    inc = make()
    for i in range(20):
        churn()
        inc(i)
    return [inc()["a"], inc(0) == inc(0)]
"#,
        r#"["bbbbb",true]"#,
    );
}

#[test]
fn loops_in_progress_keep_their_iterators_and_what_they_build() {
    same_with_collections(
        r#"
def main():
    src = [str(i) * 2 for i in range(30)]
    d = {"k%d" % i: [i] for i in range(30)}
    out = []
    built = {}
    for x in src:
        churn()
        out.append(x + "!")
        for k in d:
            built[k + x] = d[k][0]
    doubled = {k: v + [0] for k, v in d.items() if not churn()}
    tup = tuple(src)
    seen = []
    for y in tup:
        churn()
        seen.append(y)
    chars = [c for c in "abcdef".elems() if not churn()]
    return [out[:2], out[-1], len(built), built["k29" + "2929"], doubled["k3"], seen == src, chars]
"#,
        r#"[["00!","11!"],"2929!",900,29,[3,0],true,["a","b","c","d","e","f"]]"#,
    );
}

#[test]
fn sorting_with_a_key_keeps_the_keys_and_the_items() {
    same_with_collections(
        r#"
def key(r):
    return (-r["score"], "n" * 3 + r["name"])

def main():
    recs = []
    for i in range(300):
        churn()
        recs.append({"name": "user-%d" % i, "score": (i * 7919) % 100})
    top = sorted(recs, key = key)[:3]
    churn(20)
    return [r["name"] for r in top]
"#,
        r#"["user-121","user-21","user-221"]"#,
    );
}

#[test]
fn capability_arguments_and_results_survive() {
    same_with_collections(
        r#"
def main():
    got = []
    for i in range(40):
        arg = {"i": i, "s": "a" * i, "l": [i, [i]]}
        churn()
        r = t.echo(x = arg)
        churn()
        got.append(r)
    return [got[39]["got"], len(got[5]["pad"]), got[0]["got"]["l"]]
"#,
        r#"[{"i":39,"s":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","l":[39,[39]]},300,[0,[0]]]"#,
    );
}

#[test]
fn the_result_is_converted_after_collections() {
    same_with_collections(
        r#"
def main():
    rows = [{"id": i, "tags": ["t" + str(i)]} for i in range(50)]
    churn(30)
    return {"rows": rows[-2:], "n": len(rows)}
"#,
        r#"{"rows":[{"id":48,"tags":["t48"]},{"id":49,"tags":["t49"]}],"n":50}"#,
    );
}

#[test]
fn identity_keys_are_found_after_their_objects_moved() {
    same_with_collections(
        r#"
def f():
    return 1

def g():
    return 2

def main():
    lst = []
    m = lst.append
    d = {f: "f", g: "g", (f, 1): "tuple", m: "method"}
    big = {}
    for i in range(40):
        big[(g, i)] = i
    churn(30)
    m(5)
    return [d[f], d[g], d[(f, 1)], d[m], (g, 39) in big, big[(g, 7)], lst, len(big)]
"#,
        r#"["f","g","tuple","method",true,7,[5],40]"#,
    );
}

#[test]
fn sharing_and_cycles_survive() {
    same_with_collections(
        r#"
def main():
    a = [1]
    b = a
    a.append(a)
    d = {"self": None}
    d["self"] = d
    shared = [9]
    pair = (shared, shared)
    churn(30)
    b.append(2)
    pair[0].append(10)
    return [len(a), len(a[1]), a[1][2], len(d["self"]["self"]), pair[1], shared]
"#,
        r#"[3,3,2,1,[9,10],[9,10]]"#,
    );
}

/// Lists of 1 MiB of storage and more (65,536 values; under `gc-stress`,
/// 4 KiB) keep it in a block of their own, which collections leave in
/// place: its values (strings, other lists, itself) must still be the
/// copies afterwards, and lists grown, sliced, concatenated and sorted
/// beside it must read the same as without collections.
#[test]
fn large_lists_keep_their_values_in_place() {
    same_with_collections_under(
        r#"
def main():
    big = [str(i) for i in range(70000)]
    grown = []
    for i in range(9000):
        grown.append({"i": i, "s": "v%d" % i})
        if i % 1500 == 0:
            churn(10)
    pairs = [[i, big[i]] for i in range(5000)]
    big.append(big)
    churn(120)
    joined = big[:-1] + [p[1] for p in pairs]
    ordered = sorted(grown, key = lambda d: -d["i"])
    churn(120)
    checks = [
        len(big), big[69999], len(big[-1]) == len(big),
        grown[8999]["s"], grown[0]["i"], pairs[4321][1],
        len(joined), joined[-1], ordered[0]["s"], ordered[-1]["s"],
    ]
    total = 0
    for d in grown:
        total += d["i"]
    return checks + [total]
"#,
        r#"[70001,"69999",true,"v8999",0,"4321",75000,"4999","v8999","v0",40495500]"#,
        24 << 20,
    );
}

/// A program that builds a large list and drops it again and again runs
/// within a heap limit a few times the list's size: the blocks of the
/// dropped lists are freed by the collections.
#[test]
fn large_lists_that_are_dropped_are_freed() {
    let body = r#"
def main():
    n = 0
    for r in range(60):
        xs = [i * r for i in range(70000)]
        ys = []
        for x in xs:
            if x % 3 == 0:
                ys.append(x)
        n += len(ys) + xs[-1]
    return n
"#;
    let (r, collections) = run(body, 8 << 20);
    let r = r.unwrap_or_else(|e| panic!("{e:?}"));
    // The lists are 1.1 MB and about 373 KB each, 60 times over: 90 MB
    // made in all.
    let want: i64 = (0..60i64)
        .map(|r| (0..70000i64).filter(|i| (i * r) % 3 == 0).count() as i64 + 69999 * r)
        .sum();
    assert_eq!(r.to_json_string(), want.to_string());
    assert!(collections >= 5, "{collections}");
}

/// Strings a program keeps across collections are tenured (moved out of
/// the arena and left there by the collections that follow); once the
/// program drops them, a full collection frees them: a program that keeps
/// a megabyte of strings for a while, 40 times over, runs within a heap
/// limit of a few megabytes.
#[test]
fn tenured_strings_that_are_dropped_are_freed() {
    let body = r#"
def main():
    n = 0
    for r in range(40):
        keep = ["r%d-line-%d" % (r, i) for i in range(20000)]
        churn(6)
        n += len(keep[r * 100]) + len(keep)
    return n
"#;
    for heap in [6 << 20, 16 << 20] {
        let (r, collections) = run(body, heap);
        let r = r.unwrap_or_else(|e| panic!("{heap}: {e:?}"));
        let want: usize = (0..40usize)
            .map(|r| format!("r{r}-line-{}", r * 100).len() + 20000)
            .sum();
        assert_eq!(r.to_json_string(), want.to_string(), "{heap}");
        assert!(collections >= 40, "{heap}: {collections}");
    }
}

/// A collection that gives up half way (its copy would not fit beside
/// what the program keeps) leaves the strings it had copied as they were:
/// their kept hashes, which say where a string went while a collection
/// runs, are given back, so that dict lookups by those keys still find
/// them.
#[test]
fn strings_keep_their_hashes_when_a_collection_gives_up() {
    let body = r#"
def main():
    d = {}
    for i in range(15000):
        d["key-%d" % i] = i
    found = 0
    for r in range(12):
        g = [str(i) * 3 for i in range(2000)]
        for i in range(0, 15000, 7):
            if d.get("key-%d" % i) == i:
                found += 1
    return found
"#;
    let want = (0..15000).step_by(7).count() * 12;
    // Under 4 MB, the first collections give up, some after copying
    // thousands of the keys (seen with a trace of the collections).
    for heap in [4_000_000, 1 << 30] {
        let (r, _) = run(body, heap);
        let r = r.unwrap_or_else(|e| panic!("{heap}: {e:?}"));
        assert_eq!(r.to_json_string(), want.to_string(), "{heap}");
    }
}

#[test]
fn deep_nesting_is_copied_without_recursion() {
    same_with_collections_under(
        r#"
def main():
    t = ()
    l = []
    for i in range(20000):
        t = (t, i)
        l = [l]
    churn(300)
    depth = 0
    for _ in range(30000):
        if len(t) == 0:
            break
        t = t[0]
        depth += 1
    return depth
"#,
        "20000",
        // Nesting 20,000 deep costs the collection about 5 MiB of stacks
        // and table besides the copy.
        32 << 20,
    );
}

/// The heap limit bounds what a program keeps, not what it has made: a
/// program that makes 100 times its budget in garbage ends, and one that
/// keeps more than its budget fails with the heap limit.
#[test]
fn the_heap_limit_bounds_live_values() {
    let churner = "def main():\n    n = 0\n    for i in range(60000):\n        s = \"item-\" + str(i) * 4\n        n += len(s)\n    return n\n";
    let before = collections_on_this_thread();
    let got = execute(churner, &[], &Caps, &limits(256 << 10), None);
    let expected: usize = (0..60000).map(|i: usize| 5 + 4 * i.to_string().len()).sum();
    assert_eq!(got.map(|d| d.to_json_string()), Ok(expected.to_string()));
    assert!(collections_on_this_thread() - before >= 5);

    let keeper = "def main():\n    keep = []\n    for i in range(60000):\n        keep.append(\"item-\" + str(i) * 4)\n    return len(keep)\n";
    assert_eq!(
        execute(keeper, &[], &Caps, &limits(256 << 10), None),
        Err(ExecError::ResourceLimit(LimitKind::HeapBytes))
    );
}

/// A collection that finds most of the heap still reachable is put off
/// instead of copying it (the copy would free little): a program that
/// keeps nearly all it builds runs without a copy, its values intact —
/// the early first collection gives up after marking an eighth, the one
/// at 16 MiB finds nearly all reachable; a program that makes as much
/// garbage is collected every 1.5 MiB, about 50 times. (Under `gc-stress` every other such
/// collection copies anyway, so only the results are compared there.)
#[test]
fn a_collection_that_would_free_little_is_put_off() {
    let keeper = "def main():\n    rows = [{\"id\": i, \"name\": \"row-%d\" % i, \"tags\": [i, i + 1]} for i in range(100000)]\n    return [len(rows), rows[99999][\"name\"], rows[5][\"tags\"][1]]\n";
    let before = collections_on_this_thread();
    let got = execute(keeper, &[], &Caps, &limits(512 << 20), None);
    assert_eq!(
        got.map(|d| d.to_json_string()),
        Ok(r#"[100000,"row-99999",6]"#.to_string())
    );
    if !cfg!(feature = "gc-stress") {
        assert_eq!(collections_on_this_thread() - before, 0);
    }

    let churner = "def main():\n    n = 0\n    for i in range(400000):\n        row = {\"id\": i, \"name\": \"row-%d\" % i, \"tags\": [i, i + 1]}\n        n += row[\"tags\"][1]\n    return n\n";
    let before = collections_on_this_thread();
    let got = execute(churner, &[], &Caps, &limits(512 << 20), None);
    let want: u64 = (0..400000u64).map(|i| i + 1).sum();
    assert_eq!(got.map(|d| d.to_json_string()), Ok(want.to_string()));
    assert!(collections_on_this_thread() - before >= 30);
}

/// A paused execution keeps its values: they survive the pause and the
/// collections after it, on whichever thread resumes it.
#[test]
fn a_paused_execution_keeps_its_values() {
    let src = format!(
        "{CHURN}\ndef main():\n    held = [\"h\" * 10, {{\"k\": [1, 2]}}]\n    out = []\n    for i in range(8):\n        churn(3)\n        out.append(t.echo(x = held[0] + str(i))[\"got\"])\n        churn(3)\n    return [held, out[-1]]\n"
    );
    let caps = Capabilities::new(["t.echo"]);
    let mut execution: Execution<'_, String> = Execution::new(&src, &caps, limits(2 << 20), None);
    let mut step = execution.resume(None);
    let mut calls = 0;
    let result = loop {
        match step {
            Step::Done(r) => break r,
            Step::Call(call) => {
                calls += 1;
                let reply = Caps.call(HostCall {
                    name: &call.name,
                    args: call.args,
                });
                // Resumed from another thread every other call.
                step = if calls % 2 == 0 {
                    std::thread::scope(|s| {
                        s.spawn(|| execution.resume(Some((reply, Duration::ZERO))))
                            .join()
                            .unwrap()
                    })
                } else {
                    execution.resume(Some((reply, Duration::ZERO)))
                };
            }
        }
    };
    assert_eq!(calls, 8);
    assert_eq!(
        result.unwrap().to_json_string(),
        r#"[["hhhhhhhhhh",{"k":[1,2]}],"hhhhhhhhhh7"]"#
    );
    let direct = execute_with(&src, &caps, &Caps, &limits(2 << 20), None);
    assert_eq!(
        direct.unwrap().to_json_string(),
        r#"[["hhhhhhhhhh",{"k":[1,2]}],"hhhhhhhhhh7"]"#
    );
}
