//! Property tests of the builtin library through whole programs:
//! `json.decode(json.encode(v)) == v` for generated values, `%` and
//! `str.format` never panic on arbitrary format strings and arguments, and
//! `sorted` orders ints, strings and tuples of them (its byte-encoded path)
//! as a stable insertion sort by the `<` operator does.

mod common;

use codemode_vm::{execute, Data, ExecError, Limits};
use common::NoHost;
use proptest::prelude::*;
use std::time::Duration;

fn run(src: &str) -> Result<Data, ExecError<()>> {
    let limits = Limits {
        max_time: Duration::from_secs(2),
        max_heap_bytes: 8 << 20,
        ..Limits::default()
    };
    execute(src, &[], &NoHost, &limits, None)
}

/// A Starlark string literal for `s`, every non-ASCII or control character
/// written as an escape.
fn literal(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Starlark source text of a JSON-representable value.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("None".to_string()),
        any::<bool>().prop_map(|b| if b { "True" } else { "False" }.to_string()),
        any::<i64>().prop_map(|i| format!("({i})")),
        any::<i128>().prop_map(|i| format!("({i})")),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("float({})", literal(&format!("{f:e}")))),
        any::<String>().prop_map(|s| literal(&s)),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(", "))),
            // dict() of pairs: duplicate keys are allowed there (last wins).
            prop::collection::vec((any::<String>(), inner), 0..6).prop_map(|kv| {
                let pairs: Vec<String> = kv
                    .iter()
                    .map(|(k, v)| format!("({}, {v})", literal(k)))
                    .collect();
                format!("dict([{}])", pairs.join(", "))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn json_round_trips(v in value()) {
        let src = format!(
            "def main():\n    v = {v}\n    text = json.encode(v)\n    return [json.decode(text) == v, json.encode(json.decode(text)) == text]\n"
        );
        prop_assert_eq!(
            run(&src),
            Ok(Data::List(vec![Data::Bool(true), Data::Bool(true)])),
            "{}", src
        );
    }

    #[test]
    fn percent_and_format_never_panic(
        fmt in "[%{}()!rsdixXeEfFgGc0-9a-z .#+-]{0,24}",
        args in prop::collection::vec(
            prop_oneof![
                Just("1".to_string()),
                Just("-2.5".to_string()),
                Just("\"s\"".to_string()),
                Just("None".to_string()),
                Just("[1]".to_string()),
                Just("{\"k\": 1}".to_string()),
                Just("(1 << 70)".to_string()),
            ],
            0..4,
        ),
    ) {
        let tuple = format!("({}{})", args.join(", "), if args.len() == 1 { "," } else { "" });
        let fmt = literal(&fmt);
        for expr in [
            format!("{fmt} % {tuple}"),
            format!("{fmt} % {}", args.first().cloned().unwrap_or("()".into())),
            format!("{fmt} % {{\"k\": 1, \"s\": 2}}"),
            format!("{fmt}.format(*{tuple})"),
            format!("{fmt}.format(k=1, s=\"x\")"),
        ] {
            let src = format!("def main():\n    return {expr}\n");
            match run(&src) {
                Ok(Data::Str(_)) | Err(ExecError::InvalidProgram(_)) => {}
                other => prop_assert!(false, "{:?} for {}", other, expr),
            }
        }
    }

    #[test]
    fn sorted_keys_agree_with_less_than(
        keys in prop_oneof![
            prop::collection::vec(sort_int(), 17..60),
            prop::collection::vec(sort_str(), 17..60),
            prop::collection::vec(prop::collection::vec(sort_int(), 0..4), 17..60)
                .prop_map(|v| v.into_iter().map(|t| tuple(&t)).collect()),
            prop::collection::vec((sort_int(), sort_str()), 17..60)
                .prop_map(|v| v.into_iter().map(|(i, s)| format!("({i}, {s})")).collect()),
            prop::collection::vec((sort_str(), sort_int(), sort_str()), 17..60)
                .prop_map(|v| v.into_iter().map(|(a, i, b)| format!("({a}, {i}, {b})")).collect()),
        ],
        reverse in any::<bool>(),
    ) {
        // Keys tagged with their position, so that stability shows.
        let src = format!(
            "def isort(xs, reverse):\n    out = []\n    for x in xs:\n        i = len(out)\n        for _ in range(len(out)):\n            y = out[i - 1][0]\n            if (y < x[0]) if reverse else (x[0] < y):\n                i -= 1\n            else:\n                break\n        out.insert(i, x)\n    return out\n\ndef main():\n    keys = [{}]\n    tagged = [(k, i) for i, k in enumerate(keys)]\n    want = [t[1] for t in isort(tagged, {r})]\n    got = [t[1] for t in sorted(tagged, key = lambda t: t[0], reverse = {r})]\n    return got == want or [got, want]\n",
            keys.join(", "),
            r = if reverse { "True" } else { "False" },
        );
        prop_assert_eq!(run(&src), Ok(Data::Bool(true)), "{}", src);
    }
}

/// An int key: small ones (many ties) and any `i64`.
fn sort_int() -> impl Strategy<Value = String> {
    prop_oneof![
        (-3i64..3).prop_map(|i| format!("({i})")),
        any::<i64>().prop_map(|i| format!("({i})"))
    ]
}

/// A string key: a few letters and zero bytes (many ties and prefixes), or
/// any text.
fn sort_str() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ab\\x00]{0,3}".prop_map(|s| literal(&s)),
        any::<String>().prop_map(|s| literal(&s))
    ]
}

/// A tuple display of the items `t`.
fn tuple(t: &[String]) -> String {
    match t.len() {
        1 => format!("({},)", t[0]),
        _ => format!("({})", t.join(", ")),
    }
}
