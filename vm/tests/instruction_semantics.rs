//! The same programs give the same outcome, at the same position, in the
//! same number of steps, whichever dispatch loop runs their instructions:
//! each program below exercises one family of instructions (its common
//! case and its general one, and its errors) inside loops, where the fast
//! loop runs them. The outcomes and step counts are pinned, and `.ci/run`
//! runs this file with and without the `no-fast-path` feature, so the two
//! loops must agree with the same pins.

mod common;

use codemode_vm::{execute, Data, ExecError, LimitKind, Limits};
use common::NoHost;

fn run(src: &str, steps: u64) -> Result<Data, ExecError<()>> {
    let limits = Limits {
        max_steps: steps,
        ..Limits::default()
    };
    execute(src, &[], &NoHost, &limits, None)
}

/// The outcome: the result as compact JSON, or the error as displayed.
fn outcome(r: Result<Data, ExecError<()>>) -> String {
    match r {
        Ok(d) => d.to_json_string(),
        Err(e) => format!("error: {e}"),
    }
}

/// The fewest steps with which the program ends other than by running out
/// of steps.
fn steps_needed(src: &str) -> u64 {
    let (mut lo, mut hi) = (0u64, 1u64 << 16);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if run(src, mid) == Err(ExecError::ResourceLimit(LimitKind::Steps)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// A program, the steps it needs, and its outcome with that many steps.
struct Case {
    name: &'static str,
    src: &'static str,
    steps: u64,
    outcome: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "membership_unpacking_and_keyed_records",
        src: r#"def main():
    recs = [{"id": i, "tag": "t%d" % (i % 2)} for i in range(4)] + [{"tag": "t9", "id": 9}]
    seen = {}
    out = []
    for i, r in enumerate(recs):
        if r["tag"] in seen:
            seen[r["tag"]] += i
        elif r["tag"] not in ["t9", "t8"]:
            seen[r["tag"]] = r["id"]
        if 2 in seen or "x" in ("x", "y"):
            out.append(i)
    for k, v in seen.items():
        out.append(k)
        out.append(v)
    a, (b, c), recs[0]["id"] = 1, [2, 3], 7
    a, b = b, a
    return [out, a, b, c, recs[0]]
"#,
        steps: 164,
        outcome: r#"[[0,1,2,3,4,"t0",2,"t1",4],2,1,3,{"id":7,"tag":"t0"}]"#,
    },
    Case {
        name: "percent_templates",
        src: r#"def main():
    t = (1, "b")
    out = ["r%d" % 4, "%d:%s" % t, "%s-%s%%" % ("a", 2), "%d" % (5,), "%s" % None, "%d/%d" % (1.0, 2)]
    for i in range(3):
        out.append("k%d=%s" % (i, out[i]))
    return out
"#,
        steps: 33,
        outcome: r#"["r4","1:b","a-2%","5","None","1/2","k0=r4","k1=1:b","k2=a-2%"]"#,
    },
    Case {
        name: "string_methods_in_place",
        src: r#"def main():
    out = []
    for line in ["  GET /a/b?x=1 ", "\tPOST /C\n", "put /x/y"]:
        parts = line.strip().split(" ")
        path = parts[1].split("?")[0]
        out.append([parts[0].upper(), parts[0].lower(), path.startswith("/a"), path.endswith("/y"),
                    path.replace("/", "."), line.lstrip(), line.rstrip(), path.split("/")])
    return out
"#,
        steps: 64,
        outcome: r#"[["GET","get",true,false,".a.b","GET /a/b?x=1 ","  GET /a/b?x=1",["","a","b"]],["POST","post",false,false,".C","POST /C\n","\tPOST /C",["","C"]],["PUT","put",false,true,".x.y","put /x/y","put /x/y",["","x","y"]]]"#,
    },
    Case {
        name: "int_arith",
        src: r#"def main():
    x = 9223372036854775807
    y = -x - 1
    t = 0
    for i in range(3):
        t += i * 3 - 1
        t = t + (i // 2) + (i % 2) + (i & 1) + (i | 2) + (i ^ 3)
    return [t, str(x + 1), str(x * 2), str(y - 1), str(-y), str(y // -1), y % -1, 7 // -2, -7 % 3, 1 << 3, 8 >> 1, 7 / 2, 5 - 2.5, ~5, +3]
"#,
        steps: 84,
        outcome: r#"[22,"9223372036854775808","18446744073709551614","-9223372036854775809","9223372036854775808","9223372036854775808",0,-4,2,8,4,3.5,2.5,-6,3]"#,
    },
    Case {
        name: "strings_and_lists",
        src: r#"def main():
    s = ""
    xs = []
    for i in range(4):
        s += "ab"
        s = s + str(i)
        xs += [i]
        xs = xs + [i * 2]
    return [s, xs, "a" * 2, [1] * 2]
"#,
        steps: 62,
        outcome: r#"["ab0ab1ab2ab3",[0,0,1,2,2,4,3,6],"aa",[1,1]]"#,
    },
    Case {
        name: "comparisons",
        src: r#"def main():
    n = 0
    for v in [1, 2.5, 3, "a", None]:
        if v == 3:
            n += 100
        elif v != 1:
            n += 1
        if v == 2.5 or v != v:
            n += 10
    for i in range(5):
        if i < 2:
            n += 1000
        if 3 <= i:
            n += 10000
        if i > 3 and i >= 4:
            n += 100000
    return [n, 1 < 2.5, "a" < "b", (1, 2) < (1, 3), 3 == 3.0]
"#,
        steps: 116,
        outcome: "[122113,true,true,true,true]",
    },
    Case {
        name: "compare_error",
        src: r#"def main():
    t = 0
    for v in [1, 2, "x"]:
        if v < 2:
            t += 1
    return t
"#,
        steps: 16,
        outcome: "error: invalid program: <codemode>:4:14: string < int not implemented (hint: convert first: str(x) to join text, int(x) or float(x) for arithmetic)",
    },
    Case {
        name: "arith_error",
        src: r#"def main():
    t = 0
    for v in [2, 1, 0]:
        t += 6 // v
    return t
"#,
        steps: 15,
        outcome: "error: invalid program: <codemode>:4:16: floored division by zero",
    },
    Case {
        name: "string_plus_error",
        src: r#"def main():
    s = "a"
    for v in ["b", 1]:
        s += v
    return s
"#,
        steps: 11,
        outcome: "error: invalid program: <codemode>:4:11: unknown binary op: string + int (hint: convert first: str(x) to join text, int(x) or float(x) for arithmetic)",
    },
    Case {
        name: "index_and_set_index",
        src: r#"def main():
    d = {"a": 1}
    xs = [10, 20, 30]
    t = 0
    for i in range(3):
        d[str(i)] = i
        xs[i] = xs[i] + d[str(i)]
        t += xs[-1] + d["a"]
    return [t, d, xs, "abc"[1], (1, 2)[-1]]
"#,
        steps: 65,
        outcome: r#"[95,{"a":1,"0":0,"1":1,"2":2},[10,21,32],"b",2]"#,
    },
    Case {
        name: "missing_key",
        src: r#"def main():
    d = {"a": 1}
    t = 0
    for k in ["a", "b"]:
        t += d[k]
    return t
"#,
        steps: 15,
        outcome: r#"error: invalid program: <codemode>:5:15: key "b" not in dict"#,
    },
    Case {
        name: "index_out_of_range",
        src: r#"def main():
    xs = [1, 2]
    t = 0
    for i in range(3):
        t += xs[i]
    return t
"#,
        steps: 17,
        outcome: "error: invalid program: <codemode>:5:16: list index 2 out of range [-2:1]",
    },
    Case {
        name: "set_index_while_iterating",
        src: r#"def main():
    d = {"a": 1, "b": 2}
    for k in d:
        d[k] = 3
    return d
"#,
        steps: 13,
        outcome: "error: invalid program: <codemode>:4:10: cannot insert into hash table during iteration",
    },
    Case {
        name: "set_index_frozen",
        src: r#"D = {}
def main():
    D["x"] = 1
    return D
"#,
        steps: 8,
        outcome: "error: invalid program: <codemode>:3:6: cannot insert into frozen hash table",
    },
    Case {
        name: "comprehensions",
        src: r#"def main():
    xs = [i * i for i in range(5) if i % 2 == 0]
    d = {str(i): i for i in range(3)}
    e = {"a": 1, "b": 2}
    return [xs, d, e, [k for k in e], [v for v in (1, 2)]]
"#,
        steps: 84,
        outcome: r#"[[0,4,16],{"0":0,"1":1,"2":2},{"a":1,"b":2},["a","b"],[1,2]]"#,
    },
    Case {
        name: "duplicate_key",
        src: r#"def main():
    k = "a"
    return {k: 1, "b": 2, "a": 3}
"#,
        steps: 13,
        outcome: r#"error: invalid program: <codemode>:3:30: duplicate key: "a""#,
    },
    Case {
        name: "append_in_place",
        src: r#"def main():
    xs = []
    for i in range(5):
        xs.append(i)
        xs.append(len(xs))
    return xs
"#,
        steps: 36,
        outcome: "[0,1,1,3,2,5,3,7,4,9]",
    },
    Case {
        name: "append_while_iterating",
        src: r#"def main():
    xs = [1, 2]
    for x in xs:
        xs.append(x)
    return xs
"#,
        steps: 8,
        outcome: "error: invalid program: <codemode>:4:18: append: cannot append to list during iteration",
    },
    Case {
        name: "append_frozen",
        src: r#"L = []
def main():
    for i in range(2):
        L.append(i)
    return L
"#,
        steps: 12,
        outcome: "error: invalid program: <codemode>:4:17: append: cannot append to frozen list",
    },
    Case {
        name: "cells_and_free_variables",
        src: r#"def main():
    x = 1
    def f(a):
        return a + x
    x = 5
    t = 0
    for i in range(3):
        t += f(i)
    return t
"#,
        steps: 38,
        outcome: "18",
    },
    Case {
        name: "unbound_cell",
        src: r#"def main():
    def f():
        return y
    r = f()
    y = 1
    return r
"#,
        steps: 8,
        outcome: "error: invalid program: <codemode>:3:16: local variable y referenced before assignment",
    },
    Case {
        name: "unbound_local",
        src: r#"def main():
    t = 0
    for i in range(2):
        if i == 1:
            z = i
        t += z
    return t
"#,
        steps: 12,
        outcome: "error: invalid program: <codemode>:6:14: local variable z referenced before assignment",
    },
    Case {
        name: "unbound_local_plain",
        src: r#"def main():
    if len("") > 0:
        w = 1
    return w
"#,
        steps: 8,
        outcome: "error: invalid program: <codemode>:4:12: local variable w referenced before assignment",
    },
    Case {
        name: "unbound_global",
        src: r#"def read():
    return X

def main():
    return read()

r = read()
X = 1
"#,
        steps: 7,
        outcome: "error: invalid program: <codemode>:2:12: global variable X referenced before assignment",
    },
    Case {
        name: "calls_and_methods",
        src: r#"def twice(n):
    return 2 * n

def main():
    t = 0
    for i in range(4):
        t += twice(i) + len("ab") + max(i, 2)
        t += len("a,b".split(","))
    return [t, ",".join(["a", "b"]), min(3, 1)]
"#,
        steps: 88,
        outcome: r#"[37,"a,b",1]"#,
    },
    Case {
        name: "negation",
        src: r#"def main():
    t = 0
    for i in range(3):
        t += -i
    y = -9223372036854775807 - 1
    return [t, str(-y), -(1.5), not t, not 0]
"#,
        steps: 31,
        outcome: r#"[-3,"9223372036854775808",-1.5,false,true]"#,
    },
    Case {
        name: "callbacks_from_builtins",
        src: r#"def score(r):
    return r["s"] * 2

def slow(r):
    t = 0
    for c in r["n"].elems():
        t += len(c)
    return t

def main():
    rows = [{"s": 3, "n": "ab"}, {"s": 1, "n": "c"}, {"s": 2, "n": "def"}]
    a = sorted(rows, key=lambda r: r["s"])
    b = sorted(rows, key=score, reverse=True)
    c = sorted(rows, key=slow)
    d = sorted(rows, key=lambda r: (-r["s"], sorted([r["n"], "b"], key=lambda x: len(x))[0]))
    return [[r["s"] for r in x] for x in [a, b, c, d]] + [max(rows, key=score)["n"], min(rows, key=lambda r: r["n"])["s"]]
"#,
        steps: 249,
        outcome: r#"[[1,2,3],[3,2,1],[1,3,2],[3,2,1],"ab",3]"#,
    },
    Case {
        name: "callback_error",
        src: r#"def main():
    rows = [{"s": 3}, {"s": 1}, {"t": 2}]
    return sorted(rows, key=lambda r: r["s"])
"#,
        steps: 21,
        outcome: r#"error: invalid program: <codemode>:3:40: key "s" not in dict"#,
    },
    Case {
        // One instruction per display, charged the steps of the `MakeDict`
        // and the `DictPushNew` per key it stands for (the count the old
        // instructions gave, checked when it came).
        name: "record_displays",
        src: r#"def main():
    out = []
    for i in range(4):
        r = {"id": i, "name": "n%d" % i, "sub": {"a": i, "b": [i]}}
        out.append(r)
    x = {"x": out[1]["id"], "y": len(out)}
    x = {"x": x["x"], "prev": x}
    return [out[3], x, [o["sub"]["a"] for o in out]]
"#,
        steps: 95,
        outcome: r#"[{"id":3,"name":"n3","sub":{"a":3,"b":[3]}},{"x":1,"prev":{"x":1,"y":4}},[0,1,2,3]]"#,
    },
    Case {
        // A value that fails ends the program before its display is made
        // (and charged).
        name: "record_display_value_error",
        src: r#"def main():
    rows = []
    for i in range(3):
        rows.append({"k": i, "v": {"w": i}["w" if i < 2 else "z"], "after": rows})
    return rows
"#,
        steps: 41,
        outcome: r#"error: invalid program: <codemode>:4:43: key "z" not in dict"#,
    },
];

#[test]
fn every_instruction_family_has_its_pinned_outcome_and_step_count() {
    // Every case is checked before the test fails, so that one run shows
    // all that differ.
    let mut wrong = Vec::new();
    for case in CASES {
        let steps = steps_needed(case.src);
        if steps != case.steps {
            wrong.push(format!(
                "steps of {}: {steps}, pinned {}",
                case.name, case.steps
            ));
        }
        let got = outcome(run(case.src, case.steps));
        if got != case.outcome {
            wrong.push(format!("outcome of {}: {got}", case.name));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `setdefault` done in place is charged for what it adds, and fails as
/// the builtin does when an added key does not fit the heap.
#[test]
fn setdefault_in_place_is_charged_for_what_it_adds() {
    let src = "def main():\n    d = {}\n    for i in range(100000):\n        d.setdefault(i, i)\n        d.setdefault(\"k%d\" % i)\n    return len(d)\n";
    let tight = Limits {
        max_heap_bytes: 64 << 10,
        ..Limits::default()
    };
    assert_eq!(
        execute(src, &[], &NoHost, &tight, None),
        Err(ExecError::ResourceLimit(LimitKind::HeapBytes))
    );
    let roomy = Limits {
        max_heap_bytes: 256 << 20,
        ..Limits::default()
    };
    assert_eq!(
        execute(src, &[], &NoHost, &roomy, None).map(|d| d.to_json_string()),
        Ok("200000".to_string())
    );
}
