//! Hints for Python habits, through the whole pipeline: one test per row
//! of the table in `docs/architecture.md` ("Errors"). Each error keeps
//! starlark-go's message (the golden cases `*/err_python_*` and
//! `lang/err_kw_*` compare it with the reference) and gains exactly
//! ` (hint: TEXT)`; constructs that merely look alike get no hint.

use codemode::vm::{execute, without_hint, Data, ExecError, Hint, Host, HostCall, Limits};

struct NoHost;

impl Host for NoHost {
    type Error = ();
    fn call(&self, _call: HostCall<'_>) -> Result<Data, ()> {
        Err(())
    }
}

/// The error text of `source` as the service reports it.
fn error(source: &str) -> String {
    match execute(source, &[], &NoHost, &Limits::default(), None) {
        Err(e @ ExecError::InvalidProgram(_)) => e.to_string(),
        other => panic!("{source:?}: not an invalid program: {other:?}"),
    }
}

/// Asserts that `source` fails with starlark-go's `message` and `hint`.
fn assert_hint(source: &str, message: &str, hint: Hint) {
    let text = error(source);
    assert_eq!(
        text,
        format!("invalid program: {message} (hint: {})", hint.text())
    );
    assert_eq!(without_hint(&text), format!("invalid program: {message}"));
}

/// Asserts that `source` fails with `message` and no hint.
fn assert_no_hint(source: &str, message: &str) {
    assert_eq!(error(source), format!("invalid program: {message}"));
}

#[test]
fn f_strings() {
    assert_eq!(
        error("def main():\n    x = 1\n    return f\"{x}\"\n"),
        "invalid program: <codemode>:3:18: got string literal, want newline \
         (hint: f-strings do not exist; use \"{}\".format(x) or \"%s\" % x)"
    );
    assert_hint(
        "def main():\n    x = 1\n    return str(f\"{x}\")\n",
        "<codemode>:3:22: got string literal, want ','",
        Hint::FString,
    );
    assert_hint(
        "def main():\n    x = 1\n    return rf'{x}'\n",
        "<codemode>:3:19: got string literal, want newline",
        Hint::FString,
    );
    assert_hint(
        "def main():\n    return F\"\"\"{1}\"\"\"\n",
        "<codemode>:2:22: got string literal, want newline",
        Hint::FString,
    );
    // An identifier and a string apart, or a bytes prefix, are not f-strings.
    assert_no_hint(
        "def main():\n    f = 1\n    return f \"x\"\n",
        "<codemode>:3:17: got string literal, want newline",
    );
    assert_no_hint(
        "def main():\n    return br\"x\"\n",
        "<codemode>:2:17: got string literal, want newline",
    );
}

#[test]
fn exceptions() {
    assert_eq!(
        error("def main():\n    try:\n        x = 1\n    except:\n        pass\n    return 1\n"),
        "invalid program: <codemode>:2:8: got illegal token, want primary expression \
         (hint: there are no exceptions; check conditions first (k in d, d.get(k), len(x)) \
         and call fail(msg) to stop)"
    );
    assert_hint(
        "def main():\n    if True:\n        pass\n    except ValueError:\n        pass\n",
        "<codemode>:4:11: got illegal token, want primary expression",
        Hint::Exceptions,
    );
    assert_hint(
        "def main():\n    raise ValueError(\"x\")\n",
        "<codemode>:2:10: got illegal token, want primary expression",
        Hint::Exceptions,
    );
    assert_hint(
        "def main():\n    finally:\n        pass\n",
        "<codemode>:2:12: got illegal token, want primary expression",
        Hint::Exceptions,
    );
}

#[test]
fn imports() {
    assert_eq!(
        error("import json\ndef main():\n    return 1\n"),
        "invalid program: <codemode>:1:7: got illegal token, want primary expression \
         (hint: there is nothing to import; json and math are predeclared and capabilities \
         are called by their dotted names)"
    );
    assert_hint(
        "from json import decode\ndef main():\n    return 1\n",
        "<codemode>:1:5: got illegal token, want primary expression",
        Hint::Import,
    );
    assert_hint(
        "load(\"json.star\", \"decode\")\n\ndef main():\n    return 1\n",
        "<codemode>:1:1: load not implemented by this application",
        Hint::Import,
    );
}

#[test]
fn is_operator() {
    assert_eq!(
        error("def main():\n    x = None\n    if x is None:\n        return 1\n    return 2\n"),
        "invalid program: <codemode>:3:12: got illegal token, want ':' \
         (hint: there is no is operator; compare with == or != (x == None))"
    );
    assert_hint(
        "def main():\n    x = None\n    return x is not None\n",
        "<codemode>:3:16: got illegal token, want newline",
        Hint::Is,
    );
    assert_hint(
        "def main():\n    return [x for x in range(3) if x is 1]\n",
        "<codemode>:2:40: got illegal token, want ']', for, or if",
        Hint::Is,
    );
}

#[test]
fn power_operator() {
    assert_eq!(
        error("def main():\n    return 2 ** 3\n"),
        "invalid program: <codemode>:2:16: got '**', want newline \
         (hint: there is no ** operator; use math.pow(x, y) or multiplication)"
    );
    assert_hint(
        "def main():\n    x = 2\n    x **= 3\n    return x\n",
        "<codemode>:3:9: got '**', want newline",
        Hint::Power,
    );
    assert_hint(
        "def main():\n    a = {\"x\": 1}\n    return {**a, \"y\": 2}\n",
        "<codemode>:3:15: got '**', want primary expression",
        Hint::DictUnpack,
    );
    // `**` passing keyword arguments is Starlark.
    let ok = execute(
        "def f(**kw):\n    return kw\ndef main():\n    return f(**{\"a\": 1})\n",
        &[],
        &NoHost,
        &Limits::default(),
        None,
    );
    assert_eq!(ok, Ok(Data::Map(vec![("a".into(), Data::Int(1))])));
}

#[test]
fn while_loops() {
    assert_eq!(
        error("def main():\n    while True:\n        break\n    return 1\n"),
        "invalid program: <codemode>:2:5: this Starlark dialect does not support while loops \
         (hint: there are no while loops; use for i in range(n) with break)"
    );
}

#[test]
fn other_python_statements_and_displays() {
    let cases: &[(&str, &str, Hint, &str)] = &[
        (
            "class A:\n    pass\ndef main():\n    return 1\n",
            "<codemode>:1:6: got illegal token, want primary expression",
            Hint::Class,
            "there are no classes; use dicts for records and def for functions",
        ),
        (
            "def main():\n    with open(\"p\") as f:\n        pass\n    return 1\n",
            "<codemode>:2:9: got illegal token, want primary expression",
            Hint::With,
            "there are no with blocks; call functions directly, nothing needs opening or closing",
        ),
        (
            "def main():\n    yield 1\n",
            "<codemode>:2:10: got illegal token, want primary expression",
            Hint::Yield,
            "there are no generators; append to a list and return it",
        ),
        (
            "async def main():\n    return 1\n",
            "<codemode>:1:10: got def, want newline",
            Hint::Async,
            "there is no async or await; capability calls are plain calls that return their result",
        ),
        (
            "def main():\n    x = await records()\n    return x\n",
            "<codemode>:2:22: got identifier, want newline",
            Hint::Async,
            "there is no async or await; capability calls are plain calls that return their result",
        ),
        (
            "def main():\n    items = [1, 2, 3]\n    if (n := len(items)) > 2:\n        return n\n    return 0\n",
            "<codemode>:3:12: got ':', want ')'",
            Hint::Walrus,
            "there is no := operator; assign on a line of its own first",
        ),
        (
            "def main():\n    d = {}\n    del d[\"a\"]\n    return 1\n",
            "<codemode>:3:8: got illegal token, want primary expression",
            Hint::Del,
            "there is no del; use d.pop(k), x.remove(v), or build a new dict or list",
        ),
        (
            "X = 1\ndef main():\n    global X\n    return 1\n",
            "<codemode>:3:11: got illegal token, want primary expression",
            Hint::Global,
            "there is no global or nonlocal; globals are frozen, so pass values as arguments \
             and return results",
        ),
        (
            "def main():\n    nonlocal X\n    return 1\n",
            "<codemode>:2:13: got illegal token, want primary expression",
            Hint::Global,
            "there is no global or nonlocal; globals are frozen, so pass values as arguments \
             and return results",
        ),
        (
            "def main():\n    seen = {1, 2}\n    return len(seen)\n",
            "<codemode>:2:15: got ',', want ':'",
            Hint::Set,
            "there are no sets; use a dict with True values ({x: True}) or a list, and test \
             membership with in",
        ),
        (
            "def main():\n    seen = {\"a\"}\n    return len(seen)\n",
            "<codemode>:2:17: got '}', want ':'",
            Hint::Set,
            "there are no sets; use a dict with True values ({x: True}) or a list, and test \
             membership with in",
        ),
        (
            "def main():\n    return {x for x in [1, 2]}\n",
            "<codemode>:2:18: got for, want ':'",
            Hint::Set,
            "there are no sets; use a dict with True values ({x: True}) or a list, and test \
             membership with in",
        ),
        (
            "def main():\n    return set([1])\n",
            "<codemode>:2:12: this Starlark dialect does not support sets",
            Hint::Set,
            "there are no sets; use a dict with True values ({x: True}) or a list, and test \
             membership with in",
        ),
        (
            "def main():\n    return true\n",
            "<codemode>:2:12: undefined: true",
            Hint::Constants,
            "the constants are True, False and None",
        ),
    ];
    for (source, message, hint, text) in cases {
        assert_eq!(hint.text(), *text);
        assert_hint(source, message, *hint);
    }
    // A dict display missing a value is not a set; `async` and `await` are
    // identifiers.
    assert_no_hint(
        "def main():\n    return {\"a\": 1, \"b\"}\n",
        "<codemode>:2:25: got '}', want ':'",
    );
    assert_no_hint(
        "def main():\n    return {\"a\": {1: 2}, 3}\n",
        "<codemode>:2:28: got '}', want ':'",
    );
    let ok = execute(
        "def main():\n    async = 1\n    await = 2\n    return [async, await]\n",
        &[],
        &NoHost,
        &Limits::default(),
        None,
    );
    assert_eq!(ok, Ok(Data::List(vec![Data::Int(1), Data::Int(2)])));
    assert_no_hint(
        "def main():\n    async = 1\n    return async 2\n",
        "<codemode>:3:19: got int literal, want newline",
    );
}

#[test]
fn dict_keys_as_fields() {
    assert_eq!(
        error("def main():\n    d = {\"key\": 1}\n    return d.key\n"),
        "invalid program: <codemode>:3:13: dict has no .key field or method (did you mean .keys?) \
         (hint: dict entries are not fields; use d[\"key\"] or d.get(\"key\"))"
    );
    // Other types keep starlark-go's message alone.
    assert_no_hint(
        "def main():\n    return [1].push\n",
        "<codemode>:2:15: list has no .push field or method",
    );
}

#[test]
fn text_mixed_with_numbers() {
    assert_eq!(
        error("def main():\n    return \"a\" + 1\n"),
        "invalid program: <codemode>:2:16: unknown binary op: string + int \
         (hint: convert first: str(x) to join text, int(x) or float(x) for arithmetic)"
    );
    let cases = [
        (
            "def main():\n    return 1 + \"a\"\n",
            "<codemode>:2:14: unknown binary op: int + string",
        ),
        (
            "def main():\n    return 1.5 + \"x\"\n",
            "<codemode>:2:16: unknown binary op: float + string",
        ),
        (
            "def main():\n    return \"5\" - 1\n",
            "<codemode>:2:16: unknown binary op: string - int",
        ),
        (
            "def main():\n    return \"5\" < 1\n",
            "<codemode>:2:16: string < int not implemented",
        ),
    ];
    for (source, message) in cases {
        assert_hint(source, message, Hint::Convert);
    }
    assert_hint(
        "def main():\n    return (1,) + [2]\n",
        "<codemode>:2:17: unknown binary op: tuple + list",
        Hint::ConvertSequence,
    );
    assert_no_hint(
        "def main():\n    return None + 1\n",
        "<codemode>:2:17: unknown binary op: NoneType + int",
    );
}
