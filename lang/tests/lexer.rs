//! Lexer behaviour, observed through `parse`: every literal form and
//! escape, layout (indentation, tabs, continuations, CRLF), and every
//! scanner error with starlark-go's exact message and position.

use bumpalo::Bump;
use codemode_lang::ast::{ExprKind, Literal, StmtKind};
use codemode_lang::parse;

/// Parses `x = <lit>` and returns the decoded literal.
fn lit<'a>(arena: &'a Bump, src: &'a str) -> Literal<'a> {
    let m = parse(arena, src).unwrap_or_else(|d| panic!("{src:?}: {}", d.render(src)));
    match &m.stmts[0].kind {
        StmtKind::Assign { rhs, .. } => match rhs.kind {
            ExprKind::Literal(l) => l,
            ref k => panic!("{src:?}: not a literal: {k:?}"),
        },
        k => panic!("{src:?}: not an assignment: {k:?}"),
    }
}

fn string(src: &str) -> String {
    let arena = Bump::new();
    match lit(&arena, src) {
        Literal::String(s) => s.to_string(),
        l => panic!("{src:?}: not a string: {l:?}"),
    }
}

fn bytes(src: &str) -> Vec<u8> {
    let arena = Bump::new();
    match lit(&arena, src) {
        Literal::Bytes(b) => b.to_vec(),
        l => panic!("{src:?}: not bytes: {l:?}"),
    }
}

/// The error in starlark-go's words (without codemode's hint).
fn error(src: &str) -> String {
    let arena = Bump::new();
    match parse(&arena, src) {
        Ok(_) => panic!("{src:?}: parsed"),
        Err(d) => d.with_hint(None).render(src),
    }
}

#[test]
fn quote_forms() {
    assert_eq!(string("x = 'a\"b'"), "a\"b");
    assert_eq!(string("x = \"a'b\""), "a'b");
    assert_eq!(string("x = '''a\n'b''c'''"), "a\n'b''c");
    assert_eq!(string("x = \"\"\"a\n\"\"b\"\"\""), "a\n\"\"b");
    assert_eq!(string("x = ''"), "");
    assert_eq!(string("x = ''''''"), "");
    assert_eq!(string("x = r'a\\nb'"), "a\\nb");
    assert_eq!(string("x = r'a\\'b'"), "a\\'b");
    assert_eq!(string("x = r\"\"\"a\\\"\"\"\""), "a\\\"");
    assert_eq!(bytes("x = b'ab'"), b"ab");
    assert_eq!(bytes("x = rb'a\\x00'"), b"a\\x00");
    assert_eq!(bytes("x = b'''a\nb'''"), b"a\nb");
}

#[test]
fn string_escapes() {
    assert_eq!(
        string(r#"x = "\a\b\f\n\r\t\v\\\'\"""#),
        "\x07\x08\x0c\n\r\t\x0b\\'\""
    );
    assert_eq!(string("x = 'a\\\nb'"), "ab");
    assert_eq!(string("x = 'a\\\r\nb'"), "ab");
    assert_eq!(string(r"x = '\0\7\101\1012'"), "\0\x07AA2");
    assert_eq!(string(r"x = '\177'"), "\x7f");
    assert_eq!(string(r"x = '\x41\x7f'"), "A\x7f");
    assert_eq!(string(r"x = '\u00e9\U0001F600'"), "é😀");
    assert_eq!(string(r"x = '\U0010FFFF'"), "\u{10FFFF}");
    assert_eq!(string("x = 'é'"), "é");
    // A carriage return in a literal reads as a newline, as in starlark-go.
    assert_eq!(string("x = '''a\r\nb\rc'''"), "a\nb\nc");
    assert_eq!(string("x = r'''a\r\nb'''"), "a\nb");
}

#[test]
fn bytes_escapes() {
    assert_eq!(bytes(r"x = b'\xff\377\200'"), [0xff, 0xff, 0x80]);
    assert_eq!(bytes(r"x = b'\u00e9'"), "é".as_bytes());
    assert_eq!(bytes(r"x = b'\U0001F600'"), "😀".as_bytes());
    assert_eq!(bytes(r"x = b'\0'"), [0]);
}

#[test]
fn literals_without_escapes_borrow_the_source() {
    let arena = Bump::new();
    let src = "x = 'hello'";
    let Literal::String(s) = lit(&arena, src) else {
        panic!()
    };
    assert_eq!(s.as_ptr(), src[5..].as_ptr());
}

#[test]
fn int_literals() {
    let arena = Bump::new();
    let int = |src: &str| match lit(&arena, arena.alloc_str(src)) {
        Literal::Int(i) => i,
        l => panic!("{src:?}: {l:?}"),
    };
    assert_eq!(int("x = 0"), 0);
    assert_eq!(int("x = 00"), 0);
    assert_eq!(int("x = 123"), 123);
    assert_eq!(int("x = 0x1F"), 31);
    assert_eq!(int("x = 0XfF"), 255);
    assert_eq!(int("x = 0o17"), 15);
    assert_eq!(int("x = 0O17"), 15);
    assert_eq!(int("x = 0b101"), 5);
    assert_eq!(int("x = 0B1"), 1);
    assert_eq!(int("x = 9223372036854775807"), i64::MAX);
    assert_eq!(int("x = 0x7fffffffffffffff"), i64::MAX);
    match lit(&arena, "x = 9223372036854775808") {
        Literal::BigInt { digits, radix } => {
            assert_eq!((digits, radix), ("9223372036854775808", 10))
        }
        l => panic!("{l:?}"),
    }
    match lit(&arena, "x = 0xFFFFFFFFFFFFFFFFFF") {
        Literal::BigInt { digits, radix } => {
            assert_eq!((digits, radix), ("FFFFFFFFFFFFFFFFFF", 16))
        }
        l => panic!("{l:?}"),
    }
}

#[test]
fn float_literals() {
    let arena = Bump::new();
    let float = |src: &str| match lit(&arena, arena.alloc_str(src)) {
        Literal::Float(f) => f,
        l => panic!("{src:?}: {l:?}"),
    };
    assert_eq!(float("x = 1."), 1.0);
    assert_eq!(float("x = .5"), 0.5);
    assert_eq!(float("x = 1e10"), 1e10);
    assert_eq!(float("x = 1.5E-3"), 1.5e-3);
    assert_eq!(float("x = 1.e5"), 1e5);
    assert_eq!(float("x = 0.0"), 0.0);
    assert_eq!(float("x = 08.5"), 8.5);
    assert_eq!(float("x = 0e0"), 0.0);
    assert_eq!(float("x = 1e-999"), 0.0);
}

#[test]
fn layout() {
    let ok = [
        "def f():\n    x = 1\n\n    # comment\n        # odd comment\n    return x\n",
        "def f():\n\tx = 1\n        return x\n",
        "def f():\n  x = (1,\n2,\n     3)\n  return x",
        "x = [\n  1,\n]\n",
        "x = 1 + \\\n    2\n",
        "x = 1\r\ny = 2\r\n",
        "x = 1\ry = 2\r",
        "if x:\n  pass\n# trailing comment",
        "",
        "\n\n# only comments\n",
        "x = 1;",
        "x = 1; y = 2\n",
        "def f(): return 1\n",
        "def f():\n  if x:\n    pass\n  elif y:\n    pass\n  else:\n    pass\n",
    ];
    for src in ok {
        let arena = Bump::new();
        if let Err(d) = parse(&arena, src) {
            panic!("{src:?}: {}", d.render(src));
        }
    }
}

#[test]
fn tabs_follow_starlark_go() {
    // starlark-go advances a tab to the next multiple of 8 of the number of
    // characters read so far on the line: "\t\t" is column 15, not 16.
    let arena = Bump::new();
    assert!(parse(&arena, "def f():\n\t\tx = 1\n               y = 2\n").is_ok());
    assert_eq!(
        error("def f():\n\t\tx = 1\n                y = 2\n"),
        "<codemode>:3:17: got indent, want primary expression"
    );
}

#[test]
fn statements_per_line() {
    let arena = Bump::new();
    let m = parse(&arena, "x = 1; y = 2;\nz = 3\n").unwrap();
    assert_eq!(m.stmts.len(), 3);
}

#[test]
fn reserved_words_are_illegal_tokens() {
    assert_eq!(
        error("x = class"),
        "<codemode>:1:10: got illegal token, want primary expression"
    );
    for w in [
        "as", "class", "del", "except", "finally", "from", "global", "import", "is", "nonlocal",
        "raise", "try", "with", "yield",
    ] {
        let src = format!("x = 1 {w}");
        let col = 7 + w.len();
        assert_eq!(
            error(&src),
            format!("<codemode>:1:{col}: got illegal token, want newline")
        );
    }
    // Not reserved in starlark-go.
    let arena = Bump::new();
    assert!(parse(&arena, "assert = 1\nasync = 2\nawait = 3\n").is_ok());
}

#[test]
fn f_strings_are_rejected_like_starlark_go() {
    assert_eq!(
        error("x = f'x'"),
        "<codemode>:1:9: got string literal, want newline"
    );
}

#[test]
fn nul_bytes_are_unexpected_characters() {
    assert_eq!(
        error("x = 1\0"),
        "<codemode>:1:6: unexpected input character '\\x00'"
    );
}

#[test]
fn brackets_and_indentation_are_bounded() {
    let deep = "(".repeat(201);
    assert_eq!(
        error(&format!("x = {deep}")),
        "<codemode>:1:205: nesting too deep"
    );
    let mut src = String::new();
    for i in 0..201 {
        src.push_str(&" ".repeat(i));
        src.push_str("if x:\n");
    }
    src.push_str(&" ".repeat(201));
    src.push_str("pass\n");
    let e = error(&src);
    assert!(e.ends_with("nesting too deep"), "{e}");
}

/// `(source, starlark-go's error)`, each probed with the starlark-go reference.
const SCANNER_ERRORS: &[(&str, &str)] = &[
    ("if x:\n  pass\n else: pass", "<codemode>:3:2: unindent does not match any outer indentation level"),
    ("if x:\n  pass\nelse:\n  pass\n  pass\n pass", "<codemode>:6:2: unindent does not match any outer indentation level"),
    ("x = 0123", "<codemode>:1:9: obsolete form of octal literal; use 0o123"),
    ("x = 1e", "<codemode>:1:7: invalid float literal"),
    (")", "<codemode>:1:1: unexpected ')'"),
    ("x = )", "<codemode>:1:5: unexpected ')'"),
    ("def f():\n    x = 1\n  y = 2\n", "<codemode>:3:3: unindent does not match any outer indentation level"),
    ("x = $", "<codemode>:1:5: unexpected input character '$'"),
    ("x = ?", "<codemode>:1:5: unexpected input character '?'"),
    ("x = `", "<codemode>:1:5: unexpected input character '`'"),
    ("x = \u{1}", "<codemode>:1:5: unexpected input character '\\x01'"),
    ("x = €", "<codemode>:1:5: unexpected input character '€'"),
    ("x = !", "<codemode>:1:5: unexpected input character '!'"),
    ("x = 1 ! 2", "<codemode>:1:7: unexpected input character '!'"),
    ("x = \\ 1", "<codemode>:1:6: stray backslash in program"),
    ("x = 1 \\", "<codemode>:1:8: stray backslash in program"),
    ("x = \"abc", "<codemode>:1:5: unexpected EOF in string"),
    ("x = 'abc\n'", "<codemode>:1:5: unexpected newline in string"),
    ("x = '''abc", "<codemode>:1:5: unexpected EOF in string"),
    ("x = r'a\\'", "<codemode>:1:5: unexpected EOF in string"),
    ("x = 'a\\qb'", "<codemode>:1:5: invalid escape sequence \\q"),
    ("x = 'a\\x4'", "<codemode>:1:5: truncated escape sequence \\x4"),
    ("x = 'a\\x4g'", "<codemode>:1:5: invalid escape sequence \\x4g"),
    ("x = 'a\\x80'", "<codemode>:1:5: non-ASCII hex escape \\x80 (use \\u0080 for the UTF-8 encoding of U+0080)"),
    ("x = 'a\\200'", "<codemode>:1:5: non-ASCII octal escape \\200 (use \\u0080 for the UTF-8 encoding of U+0080)"),
    ("x = b'\\400'", "<codemode>:1:6: invalid escape sequence \\400"),
    ("x = 'a\\u12'", "<codemode>:1:5: truncated escape sequence \\u12"),
    ("x = 'a\\ud800'", "<codemode>:1:5: invalid Unicode code point U+D800"),
    ("x = 'a\\U00110000'", "<codemode>:1:5: code point out of range: \\U00110000 (max \\U00110000)"),
    ("x = 'a\\8'", "<codemode>:1:5: invalid escape sequence \\8"),
    ("x = 'a\\é'", "<codemode>:1:5: invalid escape sequence \\Ã"),
    ("x = ' \\x4' ", "<codemode>:1:5: truncated escape sequence \\x4"),
    ("x = ' \\u12' + 'abc' ", "<codemode>:1:5: truncated escape sequence \\u12"),
    ("x = \"\\", "<codemode>:1:5: unexpected EOF in string"),
    ("x = 0o", "<codemode>:1:7: invalid octal literal"),
    ("x = 0o8", "<codemode>:1:7: invalid octal literal"),
    ("x = 0x", "<codemode>:1:5: invalid hex literal"),
    ("x = 0xg", "<codemode>:1:5: invalid hex literal"),
    ("x = 09", "<codemode>:1:5: invalid int literal"),
    ("x = 0b2", "<codemode>:1:7: invalid binary literal"),
    ("x = 1e+", "<codemode>:1:8: invalid float literal"),
    ("x = 0o7777777777777777777777777", "<codemode>:1:5: invalid int literal"),
    ("x = 0b11111111111111111111111111111111111111111111111111111111111111111111", "<codemode>:1:5: invalid int literal"),
    ("x = 1e999", "<codemode>:1:10: invalid float literal"),
    ("x = 0e", "<codemode>:1:7: invalid float literal"),
    ("x = r'abc", "<codemode>:1:5: unexpected EOF in string"),
    ("x = rb'abc\\'", "<codemode>:1:5: unexpected EOF in string"),
    ("x = '\\x4'", "<codemode>:1:5: truncated escape sequence \\x4"),
    ("x = '\\U0010FFFF\\UFFFFFFFF'", "<codemode>:1:5: code point out of range: \\UFFFFFFFF (max \\Uffffffff)"),
    ("x = '\\u00G0'", "<codemode>:1:5: invalid escape sequence \\u00G0"),
    ("x = '\\u+123'", "<codemode>:1:5: invalid escape sequence \\u+123"),
    ("x = '\\x+1'", "<codemode>:1:5: invalid escape sequence \\x+1"),
    ("x = a٣", "<codemode>:1:6: unexpected input character '٣'"),
    ("x = 1\r\ny = )", "<codemode>:2:5: unexpected ')'"),
    ("x = (1\r\n, 2)\r\nz = $", "<codemode>:3:5: unexpected input character '$'"),
    ("x = \"\"\"a\\\"\"\"\"\"", "<codemode>:1:14: unexpected EOF in string"),
    ("x = \u{c}", "<codemode>:1:5: unexpected input character '\\f'"),
];

#[test]
fn scanner_errors_match_starlark_go() {
    let mut failures = Vec::new();
    for (src, want) in SCANNER_ERRORS {
        let arena = Bump::new();
        let got = match parse(&arena, src) {
            Ok(_) => "parsed".to_string(),
            Err(d) => d.render(src),
        };
        if got != *want {
            failures.push(format!("{src:?}\n  want {want}\n  got  {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
