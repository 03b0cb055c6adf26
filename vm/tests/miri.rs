//! The interpreter's unsafe code under Miri: small programs that go through
//! every place the dispatch loops use raw pointers or unchecked accesses —
//! registers and constants read in place, the instruction pointer, frames
//! pushed and popped by both loops (arguments copied into the callee's
//! registers), the register stack reallocated while a builtin calls back
//! into Starlark, lists appended in place, comparisons fused with their
//! jumps, range and list loops, methods given their arguments in place,
//! dict tables and strings built in one block with their object (grown,
//! compacted, copied), index hints, membership and sorts decided in place,
//! method caches keyed on the tag word, `%` templates and string methods
//! done at their call sites, builtin calls without arguments, negative and
//! tuple indexes read in place, methods given named arguments, short
//! `replace` written in one block — each with
//! its exact result (the
//! newest checked against starlark-go).
//!
//! Run under Miri (a few minutes; see `docs/architecture.md`, "Miri"):
//!
//! ```sh
//! cargo +nightly miri test -p codemode-vm --test miri
//! cargo +nightly miri test -p codemode-vm --test miri --features no-fast-path
//! ```
//!
//! Without Miri the same tests run in the ordinary suite.

use codemode_vm::{execute, Data, Host, HostCall, Limits};

struct NoHost;

impl Host for NoHost {
    type Error = String;
    fn call(&self, call: HostCall<'_>) -> Result<Data, String> {
        Ok(Data::Str(call.name.to_string()))
    }
}

/// The compact JSON of `main`'s result.
fn run(src: &str) -> String {
    match execute(src, &[], &NoHost, &Limits::default(), None) {
        Ok(d) => d.to_json_string(),
        Err(e) => panic!("unexpected error {e:?} for\n{src}"),
    }
}

#[test]
fn int_loops_comparisons_and_jumps() {
    let src = "
def main():
    t = 0
    for i in range(40):
        if i % 3 == 0 and i > 4:
            t += i * 2
        elif i < 10:
            t -= 1
        else:
            t += i // 7
    return t
";
    assert_eq!(run(src), "592");
}

#[test]
fn calls_push_and_pop_frames_in_both_loops() {
    // Plain calls (the fast path's frame push), calls with defaults and
    // keywords (the general binding), nested calls whose arguments are
    // results of calls, and a closure reading a cell.
    let src = "
def add(a, b):
    return a + b

def scaled(x, k=3, *, off=1):
    return x * k + off

def outer(n):
    acc = [0]
    def bump(d):
        acc[0] += d
        return acc[0]
    for i in range(n):
        bump(add(i, scaled(i, off=0)))
    return acc[0]

def main():
    return [add(1, 2), scaled(4), scaled(4, 2, off=5), outer(6)]
";
    assert_eq!(run(src), "[3,13,13,60]");
}

#[test]
fn the_stack_grows_while_builtins_call_back() {
    // `sorted` with a key calls Starlark from Rust; the key function calls
    // a chain of functions with many locals, so the register stack grows
    // (and may move) under the builtin's caller.
    let src = "
def level3(x):
    a, b, c, e, f, g, h = 1, 2, 3, 4, 5, 6, 7
    return x + a + b + c + e + f + g + h - 28

def level2(x):
    a, b, c, e, f, g, h = 1, 2, 3, 4, 5, 6, 7
    return level3(x * a) + b + c + e + f + g + h - 27

def level1(x):
    a, b, c, e, f, g, h = 1, 2, 3, 4, 5, 6, 7
    return level2(x) + a + b + c + e + f + g + h - 28

def key(r):
    return level1(r[\"n\"]) * -1

def main():
    rows = [{\"n\": i, \"s\": str(i)} for i in range(12)]
    out = sorted(rows, key=key)
    return [r[\"s\"] for r in out][:5]
";
    assert_eq!(run(src), r#"["11","10","9","8","7"]"#);
}

#[test]
fn lists_and_dicts_grow_in_place() {
    let src = "
def main():
    xs = []
    for i in range(300):
        xs.append(i)
    d = {}
    for x in xs:
        d[x % 17] = d.get(x % 17, 0) + x
    ys = [x for x in xs if x % 50 == 0]
    return [len(xs), d[3], ys, xs[-1]]
";
    assert_eq!(run(src), "[300,2655,[0,50,100,150,200,250],299]");
}

#[test]
fn strings_methods_and_errors() {
    let src = "
def main():
    parts = []
    for w in \"alpha beta gamma\".split(\" \"):
        parts.append(\"%s=%d\" % (w.upper(), len(w)))
    return \",\".join(parts)
";
    assert_eq!(run(src), r#""ALPHA=5,BETA=4,GAMMA=5""#);
    let failing = "
def f(x):
    return x + 1

def main():
    return f(\"a\")
";
    let err = execute(failing, &[], &NoHost, &Limits::default(), None)
        .err()
        .map(|e| format!("{e:?}"))
        .unwrap_or_default();
    assert!(err.contains("unknown binary op: string + int"), "{err}");
}

#[test]
fn tuple_blocks_split_pieces_and_a_reused_arena() {
    // enumerate, zip and items build their tuples in shared blocks, split
    // makes its pieces in one block, and the second execution runs in the
    // arena the first one grew and gave back (`arena_pool`).
    let src = "
def main():
    words = \" b a c \".strip().split(\" \")
    pairs = [(i, w) for i, w in enumerate(words)]
    d = dict(zip(words, range(3)))
    big = [str(i) for i in range(400)]
    return [pairs, sorted(d.items()), sorted(words, reverse=True), \"x\".lower(), len(big)]
";
    let want = r#"[[[0,"b"],[1,"a"],[2,"c"]],[["a",1],["b",0],["c",2]],["c","b","a"],"x",400]"#;
    assert_eq!(run(src), want);
    assert_eq!(run(src), want);
}

#[test]
fn keyed_records_short_texts_and_kept_vectors() {
    // Dict reads and writes under string keys straight from the table
    // (a record of constants, a table with an index, fresh keys), plain
    // slices, the stack-built `%` and `format` texts, `join` reading a
    // list in place, and a builtin's vector kept for the next call.
    let src = r#"
def main():
    rows = []
    seen = {}
    for i in range(12):
        r = {"id": i, "name": "n%d" % i, "tags": ["t%d" % (i % 3)]}
        r["id"] += 100
        key = r["name"][1:] + "|" + r["tags"][0]
        seen[key] = seen.get(key, 0) + len(r["tags"])
        rows.append("{}={}".format(r["id"], key))
    words = ",".join(rows[:3]).split(",")
    return [words, len(seen), seen["11|t2"], sorted(seen.keys())[:2], rows[-1][-4:]]
"#;
    assert_eq!(
        run(src),
        r#"[["100=0|t0","101=1|t1","102=2|t2"],12,1,["0|t0","10|t1"],"1|t2"]"#
    );
}

/// A host whose every capability returns rows of one shape (a list of
/// maps with the same keys), which the conversion builds by copying the
/// first row's table.
struct RowsHost;

impl Host for RowsHost {
    type Error = String;
    fn call(&self, _call: HostCall<'_>) -> Result<Data, String> {
        let row = |i: i64| {
            Data::Map(
                ["id", "name", "a", "b", "c", "d", "e", "f", "g", "h"]
                    .iter()
                    .map(|k| (k.to_string(), Data::Int(i)))
                    .collect(),
            )
        };
        Ok(Data::List((0..3).map(row).collect()))
    }
}

#[test]
fn dict_tables_grow_shrink_and_copy() {
    // Tables past the linear size (an index), grown past their first
    // block, emptied by removals (a compaction), cleared and refilled,
    // copied, and rows of host data built from one table's copy.
    let src = r#"
def main():
    d = {"k0": 0}
    for i in range(1, 40):
        d["k%d" % i] = i
    for i in range(0, 40, 3):
        d.pop("k%d" % i)
    for i in range(0, 30):
        if "k%d" % i in d:
            d.pop("k%d" % i)
    first = d.popitem()
    e = dict(d)
    e.update({"x": 1, "y": 2})
    e.setdefault("z", 3)
    d.clear()
    d["again"] = 1
    rows = records.rows(n = 1)
    rows[1]["name"] = "changed"
    return [first, len(e), sorted(e.keys())[:3], d, [r["id"] for r in rows], rows[1]["name"], rows[2]["h"], len(rows[0])]
"#;
    match execute(src, &["records.rows"], &RowsHost, &Limits::default(), None) {
        Ok(d) => assert_eq!(
            d.to_json_string(),
            r#"[["k31",31],8,["k32","k34","k35"],{"again":1},[0,1,2],"changed",2,10]"#
        ),
        Err(e) => panic!("unexpected error {e:?}"),
    }
}

#[test]
fn index_hints_membership_sorted_keys_and_method_tags() {
    // Index sites whose hints go stale (keys in other orders, removed),
    // membership decided in place (dict keys, strings among a few items),
    // sorted by key encodings (ints, strings, tuples) and in place (a few
    // items), one method site meeting several receiver kinds, unpacking
    // into locals, and short splits found a word at a time.
    let src = r#"
def main():
    recs = [{"id": i, "t": "k%d" % (i % 3)} for i in range(20)] + [{"t": "z", "id": 99}]
    seen = {}
    for r in recs:
        if r["t"] in seen:
            seen[r["t"]] += r["id"]
        elif r["t"] not in ["z"]:
            seen[r["t"]] = r["id"]
    recs[0].pop("id")
    got = [r["id"] if "id" in r else None for r in recs[:3]]
    by = sorted(recs, key = lambda r: (r["t"], -r.get("id", 0)))
    ints = sorted([(i * 7919) % 37 - 18 for i in range(30)], reverse = True)
    words = sorted(["b\x00", "a", "ab", "b"] * 5)
    small = sorted(("y", "x", "z"))
    idx = [x.index("a") for x in ["ba", ["c", "a"], "a"]]
    out = []
    for k, v in seen.items():
        out.append("%s=%d" % (k, v))
    parts = "id,name,,x,y,z,w,v,u,t,s".split(",")
    return [got, [r["t"] for r in by[:4]], ints[:5], words[:6], small, idx, out, len(parts), parts[2:4]]
"#;
    // Miri runs it some thousand times slower than a build: time enough.
    let limits = Limits {
        max_time: std::time::Duration::from_secs(600),
        ..Limits::default()
    };
    let got = execute(src, &[], &NoHost, &limits, None).map(|d| d.to_json_string());
    assert_eq!(
        got.as_deref(),
        Ok(
            r#"[[null,1,2],["k0","k0","k0","k0"],[11,10,9,8,7],["a","a","a","a","a","ab"],["x","y","z"],[1,1,0],["k0=63","k1=70","k2=57"],11,["","x"]]"#
        )
    );
}

#[test]
fn percent_templates_string_methods_in_place_and_empty_concatenation() {
    // `%` templates with their arguments read from registers (a tuple
    // display) or from one value, the quick text and the operator's own
    // path; string methods done at their call sites; `+` with an empty
    // side giving the other string.
    let src = r#"
def main():
    out = []
    for i in range(6):
        line = "  %s %d /a/%d?x=%s  " % ("GET" if i % 2 else "put", i, i * 7, "v%d" % i)
        parts = line.strip().split(" ")
        path = parts[2].split("?")[0]
        key = path.replace("/a/", "").upper() + ("" if i % 3 else "!")
        out.append("%s|%s|%s" % (parts[0].lower(), key, path.startswith("/a") and not path.endswith("0")))
    t = (1, "b")
    out.append("%d-%s" % t)
    out.append("%d %s" % (2.0, None))
    out.append("" + out[0] + "")
    return out
"#;
    assert_eq!(
        run(src),
        r#"["put|0!|False","get|7|True","put|14|True","get|21!|True","put|28|True","get|35|True","1-b","2 None","put|0!|False"]"#
    );
}

#[test]
fn builtin_calls_without_arguments_read_no_register_past_the_frame() {
    // A builtin called with no argument as the last registers of the
    // entry frame: the fast loop once read the register after them (for
    // `len`'s argument) whatever the call's arity (found by the `execute`
    // fuzz target under AddressSanitizer).
    assert_eq!(
        run("def main():\n    return [dict(), len(dict()), dict([]), dict({})]\n"),
        "[{},0,{},{}]"
    );
}

#[test]
fn record_displays_and_ints_written_in_place() {
    // Dict displays of distinct string keys made in one instruction (the
    // entries written where the dict's header ends), ints written digit
    // pair by digit pair into a template's text and into `str`'s.
    let src = r#"
def main():
    out = []
    for i in [0, 7, -42, 1234567, -9223372036854775807 - 1]:
        r = {"id": "r%d" % i, "n": i, "s": str(i), "sub": {"k": "%d!" % i}}
        out.append([r["id"], r["s"], r["sub"]["k"], len(r), "n" in r])
    return out
"#;
    assert_eq!(
        run(src),
        r#"[["r0","0","0!",4,true],["r7","7","7!",4,true],["r-42","-42","-42!",4,true],["r1234567","1234567","1234567!",4,true],["r-9223372036854775808","-9223372036854775808","-9223372036854775808!",4,true]]"#
    );
}

#[test]
fn loops_started_in_the_fast_loop_tuples_in_one_block_and_short_case_maps() {
    // Loops over tuples (of up to four items copied one by one, more by a
    // block copy: the items follow the object), lists, dicts and element
    // views, started and ended in the fast loop (a `break` included); the
    // short-text paths of `strip` and `upper`/`lower` (written in place).
    let src = r#"
def main():
    out = []
    ts = [(), (1,), (1, 2, 3, 4), (1, 2, 3, 4, 5), tuple(range(9))]
    for t in ts:
        n = 0
        for x in t:
            n += x
        out.append([len(t), n, t[-1] if t else None])
    grid = [[i * j for j in range(4)] for i in range(3)]
    for row in grid:
        for x in row:
            if x > 2:
                break
            out.append(x)
    d = {"a": 1, "b": 2}
    for k in d:
        for kk, v in d.items():
            out.append(k + kk + str(v))
    for c in "ab".elems():
        out.append(c)
    for e in []:
        out.append(e)
    words = ["  Mixed Case ", "\tTAB\n", "ümlaut  ", " \u00a0nbsp\u00a0 ", "", "   ", "lower", "UPPER"]
    for w in words:
        out.append([w.strip(), w.lstrip(), w.rstrip(), w.upper(), w.lower()])
    xs = [1, 2, 3]
    for x in xs:
        if x == 2:
            xs2 = xs + [x]
    out.append(xs2)
    a, b = "xy".elems()
    out.append(a + b)
    return out
"#;
    assert_eq!(
        run(src),
        r#"[[0,0,null],[1,1,1],[4,10,4],[5,15,5],[9,36,8],0,0,0,0,0,1,2,0,2,"aa1","ab2","ba1","bb2","a","b",["Mixed Case","Mixed Case ","  Mixed Case","  MIXED CASE ","  mixed case "],["TAB","TAB\n","\tTAB","\tTAB\n","\ttab\n"],["ümlaut","ümlaut  ","ümlaut","ÜMLAUT  ","ümlaut  "],["nbsp","nbsp  ","  nbsp","  NBSP  ","  nbsp  "],["","","","",""],["","","","   ","   "],["lower","lower","lower","LOWER","lower"],["UPPER","UPPER","UPPER","UPPER","upper"],[1,2,3,2],"xy"]"#
    );
}

#[test]
fn constant_tuples_and_lists_copied_from_them() {
    // Tuple displays of constants are constants of the code (nested ones
    // included); list displays of constants copy a constant tuple's items
    // into a new list each time (`ListOf`), in both loops.
    let src = r#"
def main():
    out = []
    for i in range(3):
        xs = ["x", "a"]
        xs.append(i)
        t = (1, "b", None, True, -2, 2.5, (3, -4.0))
        out.append([xs, t, t[6][1], len(t)])
        d = {(1, 2): "pair"}
        out.append(d[(1, 2)])
        out.append((1, 2) in d)
        out.append("up" in ("up", "down"))
        out.append(["up", "down", "degraded"][i])
    rows = [(1, "a"), (2, "b")]
    rows[0] = (9, "z")
    out.append(rows)
    big = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]
    big.append(18)
    out.append(len(big))
    one = (5,)
    out.append([one, str(one), str(("a",)), repr((None,))])
    mixed = [(1, 2), (i, 3)]
    out.append(mixed)
    out.append(sorted([(2, "b"), (1, "z"), (2, "a")]))
    out.append(max((3, 1), (3, 2)))
    out.append(list((1, 2)) + [3])
    return out
"#;
    assert_eq!(
        run(src),
        r#"[[["x","a",0],[1,"b",null,true,-2,2.5,[3,-4.0]],-4.0,7],"pair",true,true,"up",[["x","a",1],[1,"b",null,true,-2,2.5,[3,-4.0]],-4.0,7],"pair",true,true,"down",[["x","a",2],[1,"b",null,true,-2,2.5,[3,-4.0]],-4.0,7],"pair",true,true,"degraded",[[9,"z"],[2,"b"]],18,[[5],"(5,)","(\"a\",)","(None,)"],[[1,2],[2,3]],[[1,"z"],[2,"a"],[2,"b"]],[3,2],[1,2,3]]"#
    );
}

#[test]
fn negative_and_tuple_indexes_and_named_method_arguments() {
    // The seventh session's fast-loop paths: lists read at negative ints
    // and tuples at any int in place (a sort key's `kv[1]` too), builtin
    // methods given named arguments from the registers, and int literal
    // arithmetic folded when compiled. Checked against starlark-go.
    let src = r#"
def main():
    rows = []
    for i in range(6):
        t = (i, "n%d" % i)
        rows.append("{name}:{id}".format(id = t[0], name = t[-1]))
    parts = "a b c".split(" ")
    ranked = sorted([("x", 3), ("y", 1), ("z", 2)], key = lambda kv: (-kv[1], kv[0]))
    return [rows, parts[-1], parts[-3], (1, 2, 3)[1], ranked, 10 // 3 + 7 % 4 * -2]
"#;
    assert_eq!(
        run(src),
        r#"[["n0:0","n1:1","n2:2","n3:3","n4:4","n5:5"],"c","a",2,[["x",3],["z",2],["y",1]],-3]"#
    );
}

#[test]
fn short_replace_written_in_one_block() {
    // `replace` on a short text: its matches found in one pass and the
    // pieces and the new text written into the string's block
    // (`Heap::str_replaced`); a text past the short limit takes the
    // general path. Checked against starlark-go.
    let src = r#"
def main():
    out = []
    for i in range(4):
        line = "| svc%d | [link](https://svc%d.internal/h) |" % (i, i)
        out.append(line.replace("https://", "").replace(".internal", ""))
    out.append("a.b.c".replace(".", "--"))
    out.append("abc".replace("zz", "y"))
    out.append(("ab" * 140).replace("b", "")[:4])
    return out
"#;
    assert_eq!(
        run(src),
        r#"["| svc0 | [link](svc0/h) |","| svc1 | [link](svc1/h) |","| svc2 | [link](svc2/h) |","| svc3 | [link](svc3/h) |","a--b--c","abc","aaaa"]"#
    );
}
