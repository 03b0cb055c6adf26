//! Golden-style tests of the `json` and `math` modules. The semantic
//! reference binary has neither module, so each expected value here was
//! derived from starlark-go's `lib/json/json.go` and `lib/math/math.go`
//! (and the Go library functions they call: `strconv.Quote`,
//! `json.Marshal`, `json.Unmarshal`, `json.Indent`, package `math`) and
//! from the rules in docs/architecture.md, "The language". Only exactly
//! representable float results are pinned, so the expectations do not depend on last-bit differences
//! between Go's math routines and Rust's.

mod common;

use codemode_vm::{Data, ExecError};
use common::{error_of as err_of, json_of, run_main as run};

/// `main`'s result for `return EXPR`, which must be a string.
fn text_of(expr: &str) -> String {
    match run(&format!("    return {expr}")) {
        Ok(Data::Str(s)) => s,
        other => panic!("{expr}: want a string, got {other:?}"),
    }
}

/// Each `(EXPR, JSON)`: `return EXPR` gives that JSON.
fn check_json(cases: &[(&str, &str)]) -> usize {
    for (expr, want) in cases {
        assert_eq!(json_of(expr), *want, "{expr}");
    }
    cases.len()
}

/// Each `(EXPR, TEXT)`: `return EXPR` gives that string.
fn check_text(cases: &[(&str, &str)]) -> usize {
    for (expr, want) in cases {
        assert_eq!(text_of(expr), *want, "{expr}");
    }
    cases.len()
}

/// Each `(EXPR, MESSAGE)`: `return EXPR` fails with that message.
fn check_err(cases: &[(&str, &str)]) -> usize {
    for (expr, want) in cases {
        assert_eq!(err_of(expr), *want, "{expr}");
    }
    cases.len()
}

#[test]
fn json_encode_scalars_and_containers() {
    check_text(&[
        ("json.encode(None)", "null"),
        ("json.encode(True)", "true"),
        ("json.encode(False)", "false"),
        ("json.encode(0)", "0"),
        ("json.encode(-5)", "-5"),
        ("json.encode(1 << 70)", "1180591620717411303424"),
        ("json.encode(-(1 << 64))", "-18446744073709551616"),
        // Floats are Starlark's str(float).
        ("json.encode(1.0)", "1.0"),
        ("json.encode(1e6)", "1e+06"),
        ("json.encode(0.5)", "0.5"),
        ("json.encode(-0.0)", "-0.0"),
        ("json.encode(1e21)", "1e+21"),
        ("json.encode(1e-7)", "1e-07"),
        ("json.encode(123456789.0)", "1.23456789e+08"),
        ("json.encode(12345.0)", "12345.0"),
        ("json.encode(math.pi)", "3.141592653589793"),
        ("json.encode([])", "[]"),
        ("json.encode({})", "{}"),
        ("json.encode(())", "[]"),
        ("json.encode(range(0))", "[]"),
        ("json.encode([1, [2, [3]]])", "[1,[2,[3]]]"),
        ("json.encode((1, 'a'))", "[1,\"a\"]"),
        // Keys are sorted bytewise, so "B" < "a" and "z" < "é".
        (
            "json.encode({'b': 1, 'a': 2, 'B': 3})",
            "{\"B\":3,\"a\":2,\"b\":1}",
        ),
        ("json.encode({'é': 1, 'z': 2})", "{\"z\":2,\"é\":1}"),
        ("json.encode({'k': (1, None)})", "{\"k\":[1,null]}"),
        ("json.encode([{'b': [], 'a': {}}])", "[{\"a\":{},\"b\":[]}]"),
        ("json.encode({'a': 1}.items())", "[[\"a\",1]]"),
        ("json.encode('ab'.elems())", "[\"a\",\"b\"]"),
        ("json.encode('ab'.codepoint_ords())", "[97,98]"),
    ]);
    // The same list twice is not a cycle.
    let d = run("    x = [1]\n    return json.encode([x, x, {'k': x}])").unwrap();
    assert_eq!(d, Data::Str("[[1],[1],{\"k\":[1]}]".into()));
}

#[test]
fn json_encode_strings() {
    check_text(&[
        ("json.encode('')", "\"\""),
        // Printable ASCII: Go's strconv.Quote.
        ("json.encode('a\"b\\\\c')", "\"a\\\"b\\\\c\""),
        ("json.encode('<a>&')", "\"<a>&\""),
        // Anything else: Go's json.Marshal.
        ("json.encode('tab\\t')", "\"tab\\t\""),
        ("json.encode('\\r\\n')", "\"\\r\\n\""),
        ("json.encode('\\x01')", "\"\\u0001\""),
        ("json.encode('\\x1f')", "\"\\u001f\""),
        ("json.encode('é')", "\"é\""),
        ("json.encode('😀')", "\"😀\""),
        ("json.encode('<é>')", "\"\\u003cé\\u003e\""),
        ("json.encode('&é')", "\"\\u0026é\""),
        ("json.encode('\\u2028é\\u2029')", "\"\\u2028é\\u2029\""),
        ("json.encode({'a\"': 1})", "{\"a\\\"\":1}"),
        ("json.encode(['é\"\\\\'])", "[\"é\\\"\\\\\"]"),
    ]);
}

#[test]
fn json_encode_of_long_strings_escapes_them_whole() {
    // Long strings are escaped block by block: the style is still chosen
    // by the whole string (a non-ASCII character at the end escapes the
    // `<` of the first block), and a block cut never splits a character.
    let html = format!("\"{}é\"", "a\\u003c".repeat(5000));
    let emoji = format!("\"a{}\"", "😀".repeat(2000));
    let ascii = format!("\"{}\"", "a\\\"".repeat(3000));
    check_text(&[
        ("json.encode('a<' * 5000 + 'é')", &html),
        ("json.encode('a' + '😀' * 2000)", &emoji),
        ("json.encode('a\"' * 3000)", &ascii),
    ]);
}

/// A text longer than the 64 KiB pieces the encoder moves its output
/// into comes out whole and in order.
#[test]
fn json_encode_of_long_texts_is_whole() {
    let want: Vec<String> = (0..40_000).map(|i| i.to_string()).collect();
    let want = format!("[{}]", want.join(","));
    assert!(want.len() > 3 << 16);
    assert_eq!(text_of("json.encode(list(range(40000)))"), want);
    let want: Vec<String> = (0..5_000)
        .map(|i| format!("{{\"k\":[{i},\"{}\"]}}", "ab".repeat(i % 7)))
        .collect();
    let want = format!("[{}]", want.join(","));
    assert!(want.len() > 1 << 16);
    let expr = "json.encode([{\"k\": [i, \"ab\" * (i % 7)]} for i in range(5000)])";
    assert_eq!(text_of(expr), want);
}

#[test]
fn json_encode_errors() {
    check_err(&[
        (
            "json.encode(float('nan'))",
            "json.encode: cannot encode non-finite float nan",
        ),
        (
            "json.encode(float('inf'))",
            "json.encode: cannot encode non-finite float +inf",
        ),
        (
            "json.encode(float('-inf'))",
            "json.encode: cannot encode non-finite float -inf",
        ),
        (
            "json.encode({'a': 1, 2: 3})",
            "json.encode: dict has int key, want string",
        ),
        (
            "json.encode({None: 1})",
            "json.encode: dict has NoneType key, want string",
        ),
        (
            "json.encode({(1,): 1})",
            "json.encode: dict has tuple key, want string",
        ),
        (
            "json.encode({'a': {1: 2}})",
            "json.encode: in dict key \"a\": dict has int key, want string",
        ),
        (
            "json.encode([1, [2, len]])",
            "json.encode: at list index 1: at list index 1: cannot encode builtin_function_or_method as JSON",
        ),
        (
            "json.encode((1, float('nan')))",
            "json.encode: at tuple index 1: cannot encode non-finite float nan",
        ),
        ("json.encode(b'x')", "json.encode: cannot encode bytes as JSON"),
        (
            "json.encode(lambda: 0)",
            "json.encode: cannot encode function as JSON",
        ),
        ("json.encode(1, 2)", "json.encode: got 2 arguments, want 1"),
        ("json.encode(x=1)", "json.encode: unexpected keyword arguments"),
    ]);
    let e = run("    d = {}\n    d['k'] = d\n    return json.encode(d)").unwrap_err();
    assert_eq!(
        e,
        ExecError::InvalidProgram(
            "<codemode>:4:23: json.encode: in dict key \"k\": cycle in JSON structure".into()
        )
    );
}

#[test]
fn json_decode_values() {
    check_json(&[
        ("json.decode('null')", "null"),
        ("json.decode('true')", "true"),
        ("json.decode('false')", "false"),
        ("json.decode('0')", "0"),
        ("json.decode('-1')", "-1"),
        ("json.decode('-0')", "0"),
        ("type(json.decode('-0'))", "\"int\""),
        ("str(json.decode('-0.0'))", "\"-0.0\""),
        ("json.decode('1e2')", "100.0"),
        ("json.decode('1E+2')", "100.0"),
        ("json.decode('1.5e-3')", "0.0015"),
        ("json.decode('-1.0')", "-1.0"),
        (
            "str(json.decode('-123456789012345678901234567890'))",
            "\"-123456789012345678901234567890\"",
        ),
        ("len(str(json.decode('7' * 400)))", "400"),
        ("json.decode(' \\t\\n\\r 1 \\n')", "1"),
        ("json.decode('[]')", "[]"),
        ("json.decode('{}')", "{}"),
        ("json.decode('[[], {}]')", "[[],{}]"),
        (
            "json.decode('{\"a\": [1, {\"b\": null}]}')",
            "{\"a\":[1,{\"b\":null}]}",
        ),
        // A duplicate key: the last value wins, the first position stays.
        (
            "json.decode('{\"a\": 1, \"b\": 2, \"a\": 3}')",
            "{\"a\":3,\"b\":2}",
        ),
        ("json.decode('x', 0)", "0"),
        ("json.decode('x', default=None)", "null"),
        ("json.decode('1', default=2)", "1"),
        ("json.decode('[1,', default=[])", "[]"),
        ("json.decode('01', 'bad')", "\"bad\""),
    ]);
    check_text(&[
        ("json.decode('\"a\\\\u00e9\"')", "aé"),
        ("json.decode('\"\\\\/\"')", "/"),
        (
            "json.decode('\"\\\\b\\\\f\\\\n\\\\r\\\\t\"')",
            "\u{8}\u{c}\n\r\t",
        ),
        ("json.decode('\"\\\\u0041\"')", "A"),
        ("json.decode('\"\\\\ud800\\\\udc00\"')", "\u{10000}"),
        ("json.decode('\"é\"')", "é"),
        // A raw control character in an all-ASCII string is kept (the
        // fast path does not validate it).
        ("json.decode('\"a\\tb\"')", "a\tb"),
    ]);
    // Decoded containers are new and mutable.
    let d = run("    x = json.decode('[1]')\n    x.append(2)\n    y = json.decode('{}')\n    y['k'] = x\n    return y").unwrap();
    assert_eq!(d.to_json_string(), "{\"k\":[1,2]}");
}

#[test]
fn json_decode_errors() {
    check_err(&[
        (
            "json.decode('1e400')",
            "json.decode: at offset 5, invalid number: 1e400",
        ),
        (
            "json.decode('-')",
            "json.decode: at offset 1, invalid number: -",
        ),
        (
            "json.decode('1.5.5')",
            "json.decode: at offset 5, invalid number: 1.5.5",
        ),
        (
            "json.decode('1-2')",
            "json.decode: at offset 3, invalid number: 1-2",
        ),
        (
            "json.decode('-01')",
            "json.decode: at offset 3, invalid number: -01",
        ),
        (
            "json.decode('00')",
            "json.decode: at offset 2, invalid number: 00",
        ),
        (
            "json.decode('[1,]')",
            "json.decode: at offset 3, unexpected character ']'",
        ),
        (
            "json.decode('[')",
            "json.decode: at offset 1, unexpected end of file",
        ),
        (
            "json.decode('{')",
            "json.decode: at offset 1, unexpected end of file",
        ),
        (
            "json.decode('{\"a\":1,}')",
            "json.decode: at offset 7, unexpected character '}'",
        ),
        (
            "json.decode('{\"a\":1 \"b\":2}')",
            "json.decode: at offset 7, in object, got '\"', want ',' or '}'",
        ),
        (
            "json.decode('.5')",
            "json.decode: at offset 0, unexpected character '.'",
        ),
        (
            "json.decode('truex')",
            "json.decode: at offset 4, unexpected character 'x' after value",
        ),
        (
            "json.decode('True')",
            "json.decode: at offset 0, unexpected character 'T'",
        ),
        (
            "json.decode('\\f1')",
            "json.decode: at offset 0, unexpected character '\\f'",
        ),
        // %q of the byte 0xC3 (the first byte of "é") is the rune U+00C3.
        (
            "json.decode('é')",
            "json.decode: at offset 0, unexpected character 'Ã'",
        ),
        (
            "json.decode('\"\\\\u12\"')",
            "json.decode: at offset 6, invalid character '\"' in \\u hexadecimal character escape",
        ),
        (
            "json.decode('\"é\\t\"')",
            "json.decode: at offset 5, invalid character '\\t' in string literal",
        ),
        ("json.decode()", "json.decode: missing argument for x"),
        (
            "json.decode('1', 2, 3)",
            "json.decode: got 3 arguments, want at most 2",
        ),
        (
            "json.decode(1, default=2)",
            "json.decode: for parameter x: got int, want string",
        ),
        (
            "json.decode(x=1)",
            "json.decode: for parameter \"x\": got int, want string",
        ),
        (
            "json.decode(x='1')",
            "json.decode: unexpected keyword argument x",
        ),
        (
            "json.decode(None)",
            "json.decode: for parameter x: got NoneType, want string",
        ),
    ]);
}

#[test]
fn json_indent_forms() {
    check_text(&[
        ("json.indent('[]')", "[]"),
        ("json.indent('{ }')", "{}"),
        ("json.indent('[1,2]')", "[\n\t1,\n\t2\n]"),
        ("json.indent('{\"a\":1}', indent='  ')", "{\n  \"a\": 1\n}"),
        (
            "json.indent('{\"a\":[1]}', prefix='//', indent=' ')",
            "{\n// \"a\": [\n//  1\n// ]\n//}",
        ),
        // Leading space is dropped, trailing space kept.
        ("json.indent('  [1]  ')", "[\n\t1\n]  "),
        ("json.indent('\"a\"')", "\"a\""),
        ("json.indent('null')", "null"),
        ("json.indent('[{}, [ ]]')", "[\n\t{},\n\t[]\n]"),
        (
            "json.indent('{\"a\":{\"b\":1}}')",
            "{\n\t\"a\": {\n\t\t\"b\": 1\n\t}\n}",
        ),
        ("json.indent('[\"a\\\\nb\"]')", "[\n\t\"a\\nb\"\n]"),
        (
            "json.indent(json.encode({'b': [1, 2], 'a': None}))",
            "{\n\t\"a\": null,\n\t\"b\": [\n\t\t1,\n\t\t2\n\t]\n}",
        ),
    ]);
    check_err(&[
        (
            "json.indent('')",
            "json.indent: unexpected end of JSON input",
        ),
        (
            "json.indent('[1,]')",
            "json.indent: invalid character ']' looking for beginning of value",
        ),
        (
            "json.indent('{\"a\":}')",
            "json.indent: invalid character '}' looking for beginning of value",
        ),
        (
            "json.indent('01')",
            "json.indent: invalid character '1' after top-level value",
        ),
        (
            "json.indent('[1] x')",
            "json.indent: invalid character 'x' after top-level value",
        ),
        (
            "json.indent('\"abc')",
            "json.indent: unexpected end of JSON input",
        ),
        (
            "json.indent(1)",
            "json.indent: for parameter 1: got int, want string",
        ),
        (
            "json.indent('1', indent=1)",
            "json.indent: for parameter \"indent\": got int, want string",
        ),
        ("json.indent()", "json.indent: got 0 arguments, want 1"),
    ]);
}

#[test]
fn math_rounding_functions() {
    check_json(&[
        ("math.ceil(-1.2)", "-1"),
        ("math.ceil(-0.5)", "0"),
        ("math.ceil(2.0)", "2"),
        ("type(math.ceil(2.5))", "\"int\""),
        ("str(math.ceil(1e20))", "\"100000000000000000000\""),
        ("str(math.ceil(1 << 70))", "\"1180591620717411303424\""),
        ("math.floor(-1.5)", "-2"),
        ("math.floor(2.7)", "2"),
        ("math.floor(-0.0)", "0"),
        ("math.floor(5)", "5"),
        ("str(math.floor(-(1 << 70)))", "\"-1180591620717411303424\""),
        ("math.round(0.5)", "1.0"),
        ("math.round(1.5)", "2.0"),
        ("math.round(-0.5)", "-1.0"),
        ("math.round(2.4)", "2.0"),
        ("str(math.round(-0.4))", "\"-0.0\""),
        ("math.round(7)", "7.0"),
        ("str(math.round(1e300))", "\"1e+300\""),
        ("math.fabs(-3)", "3.0"),
        ("str(math.fabs(-0.0))", "\"0.0\""),
        ("str(math.fabs(float('-inf')))", "\"+inf\""),
        ("math.copysign(3, -1)", "-3.0"),
        ("math.copysign(-2, 1)", "2.0"),
        ("math.copysign(1, -0.0)", "-1.0"),
    ]);
}

#[test]
fn math_arithmetic_functions() {
    check_json(&[
        ("math.mod(7, 3)", "1.0"),
        ("math.mod(7, -3)", "1.0"),
        ("math.mod(-7, -3)", "-1.0"),
        ("math.mod(7.5, 2)", "1.5"),
        ("str(math.mod(1, 0))", "\"nan\""),
        ("str(math.mod(float('inf'), 1))", "\"nan\""),
        ("math.mod(5, float('inf'))", "5.0"),
        ("math.remainder(5, 3)", "-1.0"),
        ("math.remainder(6, 4)", "-2.0"),
        ("math.remainder(10, 4)", "2.0"),
        ("math.remainder(-5, 3)", "1.0"),
        ("str(math.remainder(1, 0))", "\"nan\""),
        ("math.pow(2, -2)", "0.25"),
        ("math.pow(-2, 3)", "-8.0"),
        ("math.pow(0, 0)", "1.0"),
        ("str(math.pow(0, -1))", "\"+inf\""),
        ("str(math.pow(-0.0, -1))", "\"-inf\""),
        ("str(math.pow(-8, 1.0 / 3))", "\"nan\""),
        ("math.pow(4, 0.5)", "2.0"),
        ("math.pow(1, float('nan'))", "1.0"),
        ("math.pow(float('nan'), 0)", "1.0"),
        ("math.pow(-1, float('inf'))", "1.0"),
        ("str(math.pow(2, 1024))", "\"+inf\""),
        ("math.sqrt(16)", "4.0"),
        ("math.sqrt(2)", "1.4142135623730951"),
        ("str(math.sqrt(-0.0))", "\"-0.0\""),
        ("str(math.sqrt(float('inf')))", "\"+inf\""),
        ("str(math.sqrt(1 << 100))", "\"1.125899906842624e+15\""),
        ("math.exp(float('-inf'))", "0.0"),
        ("str(math.exp(1000))", "\"+inf\""),
        ("math.log(1)", "0.0"),
        ("str(math.log(-1))", "\"nan\""),
        ("str(math.log(1, 0))", "\"-0.0\""),
        ("str(math.log(float('inf')))", "\"+inf\""),
        (
            "str(math.log((1 << 500) * (1 << 500) * (1 << 500)))",
            "\"+inf\"",
        ),
        ("math.log(8, 2.0)", "3.0"),
        ("math.log(4, 4)", "1.0"),
        ("math.hypot(-5, 12)", "13.0"),
        ("math.hypot(0, 0)", "0.0"),
        ("str(math.hypot(float('inf'), float('nan')))", "\"+inf\""),
    ]);
}

#[test]
fn math_trig_gamma_constants() {
    check_json(&[
        ("math.sin(0)", "0.0"),
        ("math.cos(0)", "1.0"),
        ("math.tan(0)", "0.0"),
        ("math.acos(1)", "0.0"),
        ("str(math.acos(2))", "\"nan\""),
        ("str(math.asin(2))", "\"nan\""),
        ("str(math.sin(float('inf')))", "\"nan\""),
        ("str(math.cos(float('-inf')))", "\"nan\""),
        ("math.atan2(0, -1) == math.pi", "true"),
        ("math.atan2(-0.0, -1) == -math.pi", "true"),
        ("math.atan2(1, 0) == math.pi / 2", "true"),
        ("math.atan2(0, 0)", "0.0"),
        ("str(math.atan2(-0.0, 0))", "\"-0.0\""),
        ("math.sinh(0)", "0.0"),
        ("math.tanh(float('inf'))", "1.0"),
        ("math.tanh(float('-inf'))", "-1.0"),
        ("math.asinh(0)", "0.0"),
        ("math.acosh(1)", "0.0"),
        ("str(math.acosh(0.5))", "\"nan\""),
        ("str(math.atanh(1))", "\"+inf\""),
        ("str(math.atanh(-1))", "\"-inf\""),
        ("str(math.atanh(2))", "\"nan\""),
        ("str(math.cosh(1000))", "\"+inf\""),
        ("math.degrees(0)", "0.0"),
        ("math.radians(0)", "0.0"),
        ("math.gamma(1)", "1.0"),
        ("math.gamma(2)", "1.0"),
        ("math.gamma(11)", "3628800.0"),
        ("str(math.gamma(-0.0))", "\"-inf\""),
        ("str(math.gamma(-1))", "\"nan\""),
        ("str(math.gamma(float('-inf')))", "\"nan\""),
        ("str(math.gamma(float('inf')))", "\"+inf\""),
        ("str(math.gamma(172))", "\"+inf\""),
        ("math.e", "2.718281828459045"),
        ("math.pi", "3.141592653589793"),
        ("type(math.pi)", "\"float\""),
        ("type(math)", "\"module\""),
    ]);
}

#[test]
fn math_errors() {
    check_err(&[
        (
            "math.sqrt(None)",
            "sqrt: for parameter 1: got NoneType, want float or int",
        ),
        (
            "math.sqrt(True)",
            "sqrt: for parameter 1: got bool, want float or int",
        ),
        (
            "math.atan2(1, 'a')",
            "atan2: for parameter 2: got string, want float or int",
        ),
        (
            "math.mod(1, None)",
            "mod: for parameter 2: got NoneType, want float or int",
        ),
        (
            "math.gamma([])",
            "gamma: for parameter 1: got list, want float or int",
        ),
        ("math.floor('x')", "got string, want float or int"),
        ("math.ceil(True)", "got bool, want float or int"),
        (
            "math.floor(float('inf'))",
            "cannot convert float infinity to integer",
        ),
        (
            "math.ceil(float('-inf'))",
            "cannot convert float infinity to integer",
        ),
        (
            "math.ceil(float('nan'))",
            "cannot convert float NaN to integer",
        ),
        ("math.log()", "log: got 0 arguments, want at least 1"),
        ("math.log(1, 2, 3)", "log: got 3 arguments, want at most 2"),
        ("math.log(1, 1)", "division by zero"),
        ("math.log(5, 1.0)", "division by zero"),
        ("math.hypot(x=1)", "hypot: unexpected keyword arguments"),
        ("math.copysign(1)", "copysign: got 1 arguments, want 2"),
        ("math.round()", "round: got 0 arguments, want 1"),
        ("math.floor()", "floor: got 0 arguments, want 1"),
        ("math.ceil(1, 2)", "ceil: got 2 arguments, want 1"),
        ("math.exp(1, 2)", "exp: got 2 arguments, want 1"),
    ]);
}
