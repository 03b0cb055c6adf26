//! Property tests of the whole pipeline: integer arithmetic through the
//! interpreter's fast paths agrees with a big-integer reference, and random
//! programs never panic (every outcome is a value or a classified error).

mod common;

use codemode_vm::{execute, Data, ExecError, Limits};
use common::NoHost;
use num_bigint::BigInt;
use num_integer::Integer;
use proptest::prelude::*;
use std::time::Duration;

fn run(src: &str) -> Result<Data, ExecError<()>> {
    let limits = Limits {
        max_steps: 20_000,
        max_time: Duration::from_millis(500),
        max_heap_bytes: 4 << 20,
        ..Limits::default()
    };
    execute(src, &[], &NoHost, &limits, None)
}

/// The reference result of `a OP b` with Starlark's floored semantics, or
/// `None` where Starlark fails (division by zero, bad shifts).
fn reference(a: &BigInt, op: &str, b: &BigInt) -> Option<BigInt> {
    let zero = BigInt::from(0);
    Some(match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "//" if *b == zero => return None,
        "//" => a.div_floor(b),
        "%" if *b == zero => return None,
        "%" => a.mod_floor(b),
        "&" => a & b,
        "|" => a | b,
        "^" => a ^ b,
        "<<" | ">>" => {
            let n: i64 = b.try_into().ok()?;
            if !(0..512).contains(&n) {
                return None;
            }
            if op == "<<" {
                a << n as usize
            } else {
                a >> n as usize
            }
        }
        _ => unreachable!(),
    })
}

fn operand() -> impl Strategy<Value = BigInt> {
    prop_oneof![
        any::<i64>().prop_map(BigInt::from),
        (-300i64..300).prop_map(BigInt::from),
        any::<i128>().prop_map(BigInt::from),
        Just(BigInt::from(i64::MIN)),
        Just(BigInt::from(i64::MAX)),
        Just(BigInt::from(-1)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn int_arithmetic_matches_bigint(
        a in operand(),
        b in operand(),
        op in prop::sample::select(vec!["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"]),
    ) {
        // Operands go through variables so the interpreter's register fast
        // paths run, not just constant operands.
        let src = format!("def main():\n    a = {a}\n    b = {b}\n    return str(a {op} b)\n");
        let got = run(&src);
        match reference(&a, op, &b) {
            Some(want) => prop_assert_eq!(got, Ok(Data::Str(want.to_string()))),
            None => prop_assert!(matches!(got, Err(ExecError::InvalidProgram(_))), "{:?}", got),
        }
    }

    #[test]
    fn int_comparisons_match_bigint(a in operand(), b in operand()) {
        let src = format!("def main():\n    a = {a}\n    b = {b}\n    return [a < b, a <= b, a == b, a != b, a > b, a >= b]\n");
        let want = Data::List(vec![
            Data::Bool(a < b), Data::Bool(a <= b), Data::Bool(a == b),
            Data::Bool(a != b), Data::Bool(a > b), Data::Bool(a >= b),
        ]);
        prop_assert_eq!(run(&src), Ok(want));
    }
}

/// A random expression over a few locals and literals.
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(|i| i.to_string()),
        Just("x".to_string()),
        Just("y".to_string()),
        Just("s".to_string()),
        Just("xs".to_string()),
        Just("d".to_string()),
        Just("None".to_string()),
        Just("True".to_string()),
        Just("1.5".to_string()),
        Just("\"ab\"".to_string()),
        Just("[1, 2]".to_string()),
        Just("{\"k\": 1}".to_string()),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        let ops = prop::sample::select(vec![
            "+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">",
            ">=", "in", "not in", "and", "or",
        ]);
        prop_oneof![
            (inner.clone(), ops, inner.clone()).prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            inner.clone().prop_map(|a| format!("(-{a})")),
            inner.clone().prop_map(|a| format!("(not {a})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}[{b}]")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}[{b}:]")),
            inner.clone().prop_map(|a| format!("[{a}, {a}]")),
            inner.clone().prop_map(|a| format!("len({a})")),
            inner.clone().prop_map(|a| format!("str({a})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("({a} if {b} else {c})")),
            inner.clone().prop_map(|a| format!("[v for v in {a}]")),
        ]
    })
}

/// A random statement inside `main`.
fn stmt() -> impl Strategy<Value = String> {
    prop_oneof![
        expr().prop_map(|e| format!("x = {e}")),
        expr().prop_map(|e| format!("y += {e}")),
        expr().prop_map(|e| format!("xs.append({e})")),
        (expr(), expr()).prop_map(|(k, v)| format!("d[{k}] = {v}")),
        expr().prop_map(|e| format!("for v in {e}:\n        x = v")),
        expr().prop_map(|e| format!("if {e}:\n        y = 1\n    else:\n        y = 2")),
        expr().prop_map(|e| format!("s = s * {e}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_programs_never_panic(body in prop::collection::vec(stmt(), 1..8), ret in expr()) {
        let mut src = String::from("def main():\n    x = 1\n    y = 2\n    s = \"s\"\n    xs = []\n    d = {}\n");
        for s in &body {
            src.push_str("    ");
            src.push_str(s);
            src.push('\n');
        }
        src.push_str(&format!("    return {ret}\n"));
        // Any outcome but a panic is acceptable; errors must be classified.
        match run(&src) {
            Ok(_) | Err(ExecError::InvalidProgram(_)) | Err(ExecError::ResourceLimit(_)) => {}
            Err(other) => prop_assert!(false, "unexpected outcome {:?} for\n{}", other, src),
        }
    }
}
