//! Hostile input: arbitrary bytes and token soups never panic, nesting of
//! every kind is bounded by `MAX_NESTING` without deep recursion, and time
//! stays linear in the size of the source.

use bumpalo::Bump;
use codemode_lang::{parse, source_from_bytes, MAX_NESTING};
use proptest::prelude::*;
use std::time::{Duration, Instant};

fn parse_result(src: &str) -> Result<(), String> {
    let arena = Bump::new();
    parse(&arena, src).map(|_| ()).map_err(|d| {
        // Rendering must not panic either, whatever the position.
        d.render(src)
    })
}

fn expect_too_deep(src: &str) {
    match parse_result(src) {
        Ok(()) => panic!("parsed {} bytes of deep nesting", src.len()),
        Err(e) => assert!(e.ends_with("nesting too deep"), "{e}"),
    }
}

const TOKENS: &[&str] = &[
    "def", "if", "elif", "else", "for", "in", "not", "and", "or", "lambda", "return", "pass",
    "break", "continue", "load", "while", "class", "x", "y", "f", "1", "0x1f", "1.5", "1e3", "'s'",
    "b'b'", "r'r'", "'''t'''", "(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "=", "+=", "//=",
    "+", "-", "*", "**", "/", "//", "%", "<", "<=", "==", "!=", "|", "^", "&", "<<", ">>", "~",
    "\n", "\n  ", "\n    ", "\n\t", "\\\n", "#c\n", " ", "\r\n", "'", "\"\"\"", "0", "09", "\0",
    "!", "$",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        if let Ok(src) = source_from_bytes(&bytes) {
            let _ = parse_result(src);
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(src in "\\PC{0,256}") {
        let _ = parse_result(&src);
    }

    #[test]
    fn token_soups_never_panic(idx in proptest::collection::vec(0..TOKENS.len(), 0..120)) {
        let src: String = idx.iter().map(|&i| TOKENS[i]).collect::<Vec<_>>().join(" ");
        let _ = parse_result(&src);
        let tight: String = idx.iter().map(|&i| TOKENS[i]).collect();
        let _ = parse_result(&tight);
    }

    #[test]
    fn valid_programs_wrapped_in_noise_never_panic(
        prefix in "[ \t\n(\\[{]{0,8}",
        suffix in "[ \t\n)\\]}:,]{0,8}",
    ) {
        let src = format!("{prefix}def main():\n    return [x for x in range(3) if x]\n{suffix}");
        let _ = parse_result(&src);
    }
}

#[test]
fn hundred_thousand_open_brackets_are_an_error_not_an_overflow() {
    for open in ["(", "[", "{", "f("] {
        expect_too_deep(&format!("x = {}", open.repeat(100_000)));
    }
}

#[test]
fn ten_thousand_indentation_levels_are_an_error() {
    let mut src = String::new();
    for i in 0..10_000 {
        src.push_str(&" ".repeat(i));
        src.push_str("if x:\n");
    }
    expect_too_deep(&src);
}

#[test]
fn bracket_free_chains_are_bounded() {
    let n = 100_000;
    expect_too_deep(&format!("x = {}1", "not ".repeat(n)));
    expect_too_deep(&format!("x = {}1", "- ".repeat(n)));
    expect_too_deep(&format!("x = {}1", "lambda: ".repeat(n)));
    expect_too_deep(&format!("x = {}1", "1 if 1 else ".repeat(n)));
    expect_too_deep(&format!("x = 1{}", " + 1".repeat(n)));
    expect_too_deep(&format!("x = a{}", ".b".repeat(n)));
    expect_too_deep(&format!("x = a{}", "[0]".repeat(n)));
    expect_too_deep(&format!("x = {}", "[x for x in ".repeat(n)));
    expect_too_deep(&format!(
        "if x:\n  pass\n{}",
        "elif x:\n  pass\n".repeat(n / 10)
    ));
}

#[test]
fn limits_are_exact_for_operator_chains() {
    // 200 terms are 200 levels of tree: accepted; 201 are not.
    let terms = |n: usize| format!("x = 1{}", " + 1".repeat(n - 1));
    assert!(parse_result(&terms(MAX_NESTING)).is_ok());
    expect_too_deep(&terms(MAX_NESTING + 1));
    let nots = |n: usize| format!("x = {}1", "not ".repeat(n));
    assert!(parse_result(&nots(MAX_NESTING - 1)).is_ok());
    expect_too_deep(&nots(MAX_NESTING));
    let brackets = |n: usize| format!("x = {}{}", "[".repeat(n), "]".repeat(n));
    assert!(parse_result(&brackets(MAX_NESTING)).is_ok());
    expect_too_deep(&brackets(MAX_NESTING + 1));
}

/// Parses `make(n)` and `make(4 * n)` and checks the time grows roughly
/// linearly (with a generous allowance for noise on a shared machine).
fn assert_linear(name: &str, make: impl Fn(usize) -> String) {
    // The best of three runs: a slow stretch of the machine during one run
    // must not read as non-linear growth.
    let time = |src: &str| {
        (0..3)
            .map(|_| {
                let start = Instant::now();
                let _ = parse_result(src);
                start.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let small = make(20_000);
    let large = make(80_000);
    let (a, b) = (time(&small), time(&large));
    assert!(
        b < a * 12 + Duration::from_millis(50),
        "{name}: {a:?} for {} bytes, {b:?} for {} bytes",
        small.len(),
        large.len()
    );
}

#[test]
fn time_is_linear_in_source_size() {
    assert_linear("statements", |n| "x = [1, 'a', {2: 3}]\n".repeat(n));
    assert_linear("open string", |n| format!("x = '{}", "a".repeat(n)));
    assert_linear("long string", |n| format!("x = '''{}'''", "a\\n".repeat(n)));
    assert_linear("comments", |n| "# comment\n".repeat(n));
    assert_linear("blank lines in brackets", |n| {
        format!("x = ({})", "\n".repeat(n))
    });
    assert_linear("dedents", |n| {
        let mut s = String::new();
        for _ in 0..n / 100 {
            for d in 0..50 {
                s.push_str(&" ".repeat(d));
                s.push_str("if x:\n");
            }
            s.push_str(&" ".repeat(50));
            s.push_str("pass\n");
        }
        s
    });
    assert_linear("tokens after error", |n| {
        format!("x = ) {}", "1 ".repeat(n))
    });
}
