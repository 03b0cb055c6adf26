//! Tests of the compiler through its disassembly: the register design that
//! the interpreter's speed depends on (locals in registers, constants as
//! operands, fused method calls) is pinned here.

use codemode_vm::disassemble;

fn body_of(listing: &str, function: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in listing.lines() {
        if let Some(rest) = line.strip_prefix("function ") {
            inside = rest.starts_with(&format!("{function} "));
            continue;
        }
        if inside {
            // Drop the program counter column.
            let text = line.trim().split_once("  ").map_or("", |x| x.1);
            out.push(text.trim().to_string());
        }
    }
    out
}

#[test]
fn hot_loop_is_three_instructions_per_iteration() {
    // The loop is inverted: its test (`fornext`) sits at the bottom and
    // jumps back into the body, so `t += i * 2` costs three dispatches. The
    // range is iterated in three registers (r3..r5) without an iterator
    // object.
    let src = "def main():\n    t = 0\n    for i in range(10):\n        t += i * 2\n    return t\n";
    let listing = disassemble(src, &[]).unwrap();
    let body = body_of(&listing, "main");
    assert_eq!(
        body,
        vec![
            "const r0 = 0",
            "const r3 = <builtin_function_or_method>",
            "call r2 = r3(npos 1, names [], star false, starstar false; r4 = 10)",
            "iterstart r3 = r2",
            "jump 7",
            "mul r6 = r1 2",
            "inplaceadd r0 = r0 r6",
            "fornext r1 = next r3 then 5",
            "iterend r3",
            "return r0",
            "return None",
        ],
        "{listing}"
    );
}

#[test]
fn method_calls_are_fused_and_captured_variables_use_cells() {
    let src = "def main():\n    xs = []\n    n = 3\n    f = lambda: n\n    xs.append(f())\n    return xs\n";
    let listing = disassemble(src, &[]).unwrap();
    let main = body_of(&listing, "main");
    assert!(
        main.iter()
            .any(|l| l.starts_with("callmethod ") && l.contains(".append(")),
        "{listing}"
    );
    assert!(
        main.iter().any(|l| l.starts_with("storecell cell r1")),
        "{listing}"
    );
    let lambda = body_of(&listing, "lambda");
    assert_eq!(
        lambda,
        vec!["loadfree r0 = free0", "return r0", "return None"],
        "{listing}"
    );
}

#[test]
fn unassigned_locals_are_checked_only_where_needed() {
    let src = "def main():\n    if True:\n        x = 1\n    y = 2\n    return [x, y]\n";
    let listing = disassemble(src, &[]).unwrap();
    let checks: Vec<_> = body_of(&listing, "main")
        .into_iter()
        .filter(|l| l.starts_with("checkbound"))
        .collect();
    assert_eq!(checks, vec!["checkbound r0 \"x\""], "{listing}");
}

#[test]
fn capability_roots_are_constants() {
    let src = "def main():\n    return records.lookup(key=\"a\")\n";
    let listing = disassemble(src, &["records.lookup"]).unwrap();
    let main = body_of(&listing, "main");
    assert_eq!(main[0], "const r1 = <namespace>", "{listing}");
    assert!(
        main[1].starts_with("callmethod r0 = r1.lookup(npos 0, names [\"key\"]")
            && main[1].ends_with("; r2 = \"a\")"),
        "{listing}"
    );
}

#[test]
fn compile_errors_are_rendered_like_execute() {
    assert_eq!(
        disassemble("def main():\n    return x\n", &[]),
        Err("invalid program: <codemode>:2:12: undefined: x".to_string())
    );
}

#[test]
fn an_assignment_uses_a_temporary_only_when_it_must() {
    // `x = x + 1` stays one instruction; a dict display that reads its own
    // target is built in a temporary and moved (its entries read the old
    // value); a comprehension and a conditional expression that do not
    // read their target are built in its register directly.
    let src = "def main():\n    x = 1\n    x = x + 1\n    d = {\"a\": x}\n    \
               d = {\"a\": d[\"a\"]}\n    l = [v for v in range(3)]\n    \
               c = x if x else 2\n    return c\n";
    let listing = disassemble(src, &[]).unwrap();
    let body = body_of(&listing, "main");
    assert_eq!(
        body,
        vec![
            "const r0 = 1",
            "add r0 = r0 1",
            "makerecord r1 = {\"a\": r0}",
            "index r6 = r1[\"a\"]",
            "makerecord r5 = {\"a\": r6}",
            "move r1 = r5",
            "makelist r3 = r0..+0",
            "const r6 = <builtin_function_or_method>",
            "call r5 = r6(npos 1, names [], star false, starstar false; r7 = 3)",
            "iterstart r6 = r5 fill r3",
            "jump 12",
            "listappend r3 += r2",
            "fornext r2 = next r6 then 11",
            "iterend r6",
            "jumpiffalse r0 17",
            "move r4 = r0",
            "jump 18",
            "const r4 = 2",
            "return r4",
            "return None",
        ],
        "{listing}"
    );
}

#[test]
fn and_or_on_the_target_itself_writes_it_in_place() {
    // `x = x and f(x)`: the left operand is the variable, so the register
    // still holds the old value when the right operand reads it.
    let src = "def main():\n    x = {\"k\": 1}\n    x = x and x.get(\"k\")\n    return x\n";
    let listing = disassemble(src, &[]).unwrap();
    let body = body_of(&listing, "main");
    assert_eq!(
        &body[2..4],
        [
            "jumpiffalse r0 4",
            "callmethod r0 = r0.get(npos 1, names [], star false, starstar false, args r2..; r2 = \"k\")",
        ],
        "{listing}"
    );
}

#[test]
fn percent_of_a_literal_reads_a_tuple_display_in_place() {
    let src = "def main():\n    n = 2\n    t = (n,)\n    return [\"%s=%d%%\" % (\"k\", n), \"r%d\" % n, \"%d\" % t, \"%d %d\" % (n,), \"%r\" % n, \"%d\" % 5]\n";
    let listing = disassemble(src, &[]).unwrap();
    let main = body_of(&listing, "main");
    let percents: Vec<&String> = main.iter().filter(|l| l.starts_with("percent ")).collect();
    assert_eq!(
        percents,
        vec![
            "percent r3 = \"%s=%d%%\" % r9..+2",
            "percent r4 = \"r%d\" % r0",
            "percent r5 = \"%d\" % r1",
            "percent r6 = \"%d %d\" % r9",
        ],
        "{listing}"
    );
    // A display of another length than the conversions is a tuple; `%r`
    // and a constant operand keep the operator.
    assert_eq!(
        main.iter().filter(|l| l.starts_with("maketuple ")).count(),
        2,
        "{listing}"
    );
    assert_eq!(
        main.iter().filter(|l| l.starts_with("mod ")).count(),
        2,
        "{listing}"
    );
}

#[test]
fn displays_of_constants_are_constants() {
    // A tuple display of constants (nested ones included) is one
    // constant; a list display of constants is one instruction that copies
    // a constant tuple's items into a new list; a display with any other
    // item is built from registers as before.
    let src = "def f(x):\n    a = (1, (\"b\", None))\n    l = [\"x\", -2]\n    m = [(1, 2), x]\n    return m\n";
    let listing = disassemble(src, &[]).unwrap();
    assert_eq!(
        body_of(&listing, "f"),
        vec![
            "const r1 = (1, (\"b\", None))",
            "makelist r2 = items of (\"x\", -2)",
            "const r4 = (1, 2)",
            "move r5 = r0",
            "makelist r3 = r4..+2",
            "return r3",
            "return None",
        ],
        "{listing}"
    );
}

#[test]
fn int_arithmetic_on_literals_is_folded() {
    // Int arithmetic on literals is one constant; what would fail or leave
    // 64 bits (a division by zero, an overflow into a big int) and anything
    // not on literals is computed when it runs, where it is reported.
    let src = "def f(x):\n    a = 60 * 60 * 24\n    b = x % (100 // 2 + 1)\n    c = -(7 // -2) + 7 % -3\n    d = 1 // 0\n    e = 9223372036854775807 + 1\n    g = (3, 2 * 5)\n    h = [1 - 2]\n    return x * (2 + 3)\n";
    let listing = disassemble(src, &[]).unwrap();
    assert_eq!(
        body_of(&listing, "f"),
        vec![
            "const r1 = 86400",
            "mod r2 = r0 51",
            "const r3 = 2",
            "floordiv r4 = 1 0",
            "add r5 = 9223372036854775807 1",
            "const r6 = (3, 10)",
            "makelist r7 = items of (-1,)",
            "mul r8 = r0 5",
            "return r8",
            "return None",
        ],
        "{listing}"
    );
}

#[test]
fn folding_looks_a_bounded_depth_into_an_expression() {
    // A chain of additions on literals is folded when it is at most the
    // folding depth deep; a longer one is computed when it runs, so that
    // the compiler's work stays linear in the chain's length. (150 terms:
    // the parser refuses deeper nesting.)
    let fold = |n: usize| {
        let chain = vec!["1"; n].join(" + ");
        let listing = disassemble(&format!("def f():\n    x = {chain}\n"), &[]).unwrap();
        body_of(&listing, "f")
    };
    assert_eq!(fold(8), vec!["const r0 = 8", "return None"]);
    let long = fold(150);
    assert_eq!(long.iter().filter(|l| l.starts_with("add ")).count(), 149);
}

#[test]
fn only_a_comprehension_of_one_loop_and_no_condition_fills_its_list() {
    // Such a list gets an element per iteration, so its loop gives it room
    // for all at once; with a condition or a second loop it would get
    // fewer or more, and neither loop does. A `for` statement fills none.
    let starting = |prefix: &'static str, src: &str| -> Vec<String> {
        let listing = disassemble(src, &[]).unwrap();
        body_of(&listing, "main")
            .into_iter()
            .filter(|l| l.starts_with(prefix))
            .collect()
    };
    let loops = |src: &str| starting("iterstart", src);
    let src = "def main():\n    return [v for v in (1, 2)]\n";
    let one = loops(src);
    let made = starting("makelist", src);
    assert_eq!((one.len(), made.len()), (1, 1));
    // `makelist rN = ...` and `iterstart ... fill rN`.
    let list = made[0].split(' ').nth(1).unwrap();
    assert!(
        one[0].ends_with(&format!(" fill {list}")),
        "{one:?} {made:?}"
    );
    for src in [
        "def main():\n    return [v for v in [1, 2] if v]\n",
        "def main():\n    return [v for v in [1, 2] for w in [3]]\n",
        "def main():\n    return {v: 1 for v in [1, 2]}\n",
        "def main():\n    x = []\n    for v in [1, 2]:\n        x.append(v)\n    return x\n",
    ] {
        let found = loops(src);
        assert!(!found.is_empty(), "{src}");
        assert!(
            found.iter().all(|l| !l.contains("fill")),
            "{src}: {found:?}"
        );
    }
}
