//! Whole-program tests of the builtins: universe functions, methods, and
//! the json and math modules, with starlark-go's results and error texts
//! (checked against the reference binary where it has the builtin; json
//! and math from starlark-go's lib sources).

mod common;

use codemode_vm::{execute, ExecError, LimitKind, Limits};
use common::{error_of as err, json_of as ok, run_main as run, NoHost};

fn check(cases: &[(&str, &str)]) {
    for (expr, want) in cases {
        assert_eq!(ok(expr), *want, "{expr}");
    }
}

fn check_err(cases: &[(&str, &str)]) {
    for (expr, want) in cases {
        assert_eq!(err(expr), *want, "{expr}");
    }
}

#[test]
fn universe_conversions() {
    check(&[
        ("int('0x10', 0)", "16"),
        ("int('-0b101', 0)", "-5"),
        ("int('0o17', 8)", "15"),
        ("int('ff', 16)", "255"),
        ("int('0xff', 16)", "255"),
        ("int('000', 0)", "0"),
        ("int(' 1'.strip())", "1"),
        ("int(3.9)", "3"),
        ("int(-3.9)", "-3"),
        ("int(True)", "1"),
        (
            "str(int('123456789012345678901234567890') // 100000000000000000000)",
            "\"1234567890\"",
        ),
        ("float('1e3')", "1000.0"),
        ("float('1_0')", "10.0"),
        ("str(float('-inf'))", "\"-inf\""),
        ("str(float('NaN'))", "\"nan\""),
        ("float(3)", "3.0"),
        ("float()", "0.0"),
        ("float(True)", "1.0"),
        ("bool([])", "false"),
        ("bool()", "false"),
        ("str(1e6)", "\"1e+06\""),
        ("str(b'ab')", "\"ab\""),
        ("repr('a\"b')", "\"\\\"a\\\\\\\"b\\\"\""),
        ("type(1.0)", "\"float\""),
        ("type(range(2))", "\"range\""),
        ("chr(233)", "\"é\""),
        ("ord('é')", "233"),
        ("ord(b'a')", "97"),
        ("hash('abc')", "96354"),
        ("abs(-3)", "3"),
        ("abs(-2.5)", "2.5"),
        ("str(abs(-9223372036854775808))", "\"9223372036854775808\""),
        ("len('héllo')", "6"),
        ("len({1: 2})", "1"),
        ("len(range(0, 10, 3))", "4"),
        ("list(range(3))", "[0,1,2]"),
        ("list(range(5, 0, -2))", "[5,3,1]"),
        ("tuple([1, 2])", "[1,2]"),
        ("list({'a': 1, 'b': 2})", "[\"a\",\"b\"]"),
        ("dict([('a', 1)], b=2)", "{\"a\":1,\"b\":2}"),
        ("dict({'a': 1})", "{\"a\":1}"),
        ("dict([[1, 2]])[1]", "2"),
        ("bytes([104, 105]) == b'hi'", "true"),
        ("str(bytes('hé'))", "\"hé\""),
    ]);
}

#[test]
fn universe_conversion_errors() {
    check_err(&[
        ("int('1_000')", "int: invalid literal with base 10: 1_000"),
        ("int(' 12 ')", "int: invalid literal with base 10:  12 "),
        ("int('0755', 0)", "int: invalid literal with base 0: 0755"),
        ("int('z', 37)", "int: base must be an integer >= 2 && <= 36"),
        ("int('x', 'a')", "int: for base, got string, want int"),
        ("int()", "int: missing argument for x"),
        (
            "int(1, 2)",
            "int: can't convert non-string with explicit base",
        ),
        ("int(None)", "int: cannot convert NoneType to int"),
        (
            "int(float('nan'))",
            "int: cannot convert float NaN to integer",
        ),
        (
            "int('1', bas=2)",
            "int: unexpected keyword argument \"bas\"",
        ),
        (
            "int('1', x=2)",
            "int: got multiple values for keyword argument \"x\"",
        ),
        ("float(None)", "float got NoneType, want number or string"),
        ("float('1e400')", "floating-point number too large"),
        ("float('abc')", "invalid float literal: abc"),
        ("float(' 1.5 ')", "invalid float literal:  1.5 "),
        ("float('0x10')", "invalid float literal: 0x10"),
        ("float(1, 2)", "float got 2 arguments, wants 1"),
        ("float(x=1)", "float does not accept keyword arguments"),
        (
            "float(((1 << 500) * (1 << 500) * (1 << 100)))",
            "int too large to convert to float",
        ),
        ("str()", "str: got 0 arguments, want exactly 1"),
        ("type()", "type: got 0 arguments, want exactly 1"),
        ("bytes()", "bytes: got 0 arguments, want exactly 1"),
        (
            "bytes(1)",
            "bytes: got int, want string, bytes, or iterable of ints",
        ),
        (
            "bytes([1, 256])",
            "bytes: at index 1, 256 out of range (want value in unsigned 8-bit range)",
        ),
        ("dict(1)", "dict: got int, want iterable"),
        (
            "dict([1])",
            "dict: dictionary update sequence element #0 is not iterable (int)",
        ),
        (
            "dict([(1, 2, 3)])",
            "dict: dictionary update sequence element #0 has length 3, want 2",
        ),
        ("dict([1], [2])", "dict: got 2 arguments, want at most 1"),
        (
            "list('ab')",
            "list: for parameter 1: got string, want iterable",
        ),
        ("list(1)", "list: for parameter 1: got int, want iterable"),
        ("tuple([1], [2])", "tuple: got 2 arguments, want at most 1"),
        ("bool(1, 2)", "bool: got 2 arguments, want at most 1"),
        ("len(1)", "len: value of type int has no len"),
        ("len()", "len: got 0 arguments, want 1"),
        ("len([], x=1)", "len: unexpected keyword arguments"),
        ("abs('x')", "got string, want int or float"),
        ("chr(-1)", "chr: Unicode code point -1 out of range (<0)"),
        (
            "chr(0x110000)",
            "chr: Unicode code point U+110000 out of range (>0x10FFFF)",
        ),
        ("chr(1 << 70)", "chr: 1180591620717411303424 out of range"),
        ("chr('a')", "chr: got string, want int"),
        (
            "ord('')",
            "ord: string encodes 0 Unicode code points, want 1",
        ),
        (
            "ord('ab')",
            "ord: string encodes 2 Unicode code points, want 1",
        ),
        ("ord(b'ab')", "ord: bytes has length 2, want 1"),
        ("ord(1)", "ord: got int, want string or bytes"),
        ("hash(1)", "hash: got int, want string or bytes"),
        ("range(0, 10, 0)", "range: step argument must not be zero"),
        ("range('a')", "range: for parameter 1: got string, want int"),
        (
            "range(1, 2, 3, 4)",
            "range: got 4 arguments, want at most 3",
        ),
        ("range()", "range: got 0 arguments, want at least 1"),
    ]);
}

#[test]
fn universe_sequences() {
    check(&[
        ("sorted([3, 1, 2])", "[1,2,3]"),
        ("sorted([3, 1, 2], reverse=True)", "[3,2,1]"),
        (
            "sorted(['bb', 'a', 'ccc'], key=len)",
            "[\"a\",\"bb\",\"ccc\"]",
        ),
        (
            "sorted([(1, 'b'), (0, 'z'), (1, 'a')], key=lambda p: p[0])",
            "[[0,\"z\"],[1,\"b\"],[1,\"a\"]]",
        ),
        (
            "sorted([(1, 'b'), (0, 'z'), (1, 'a')], key=lambda p: p[0], reverse=True)",
            "[[1,\"b\"],[1,\"a\"],[0,\"z\"]]",
        ),
        ("sorted({'b': 1, 'a': 2})", "[\"a\",\"b\"]"),
        ("sorted([2.5, 1, float('nan'), -1])[:3]", "[-1,1,2.5]"),
        ("sorted(range(100, 0, -1))[:3]", "[1,2,3]"),
        ("reversed([1, 2, 3])", "[3,2,1]"),
        ("reversed({'a': 1, 'b': 2})", "[\"b\",\"a\"]"),
        ("enumerate(['a', 'b'])", "[[0,\"a\"],[1,\"b\"]]"),
        ("enumerate(['a'], 5)", "[[5,\"a\"]]"),
        ("zip([1, 2, 3], ('a', 'b'))", "[[1,\"a\"],[2,\"b\"]]"),
        ("zip()", "[]"),
        ("min([3, 1, 2])", "1"),
        ("max(3, 1, 2)", "3"),
        ("max(['a', 'bbb', 'cc'], key=len)", "\"bbb\""),
        ("min(['a', 'bbb', 'cc'], key=len)", "\"a\""),
        ("max([1, 3, 3.0])", "3"),
        ("all([1, 'a'])", "true"),
        ("all([])", "true"),
        ("any([0, ''])", "false"),
        ("any(range(3))", "true"),
        ("sum([1, 2, 3])", "6"),
        ("sum([])", "0"),
        ("sum([1, 2.5])", "3.5"),
        ("sum((0.5, 1, 2))", "3.5"),
        ("sum(range(5))", "10"),
        (
            "str(sum([(1 << 63), (1 << 63)]))",
            "\"18446744073709551616\"",
        ),
    ]);
}

#[test]
fn universe_sequence_errors() {
    check_err(&[
        ("sorted()", "sorted: missing argument for iterable"),
        (
            "sorted([1], key=1)",
            "sorted: for parameter \"key\": got int, want callable",
        ),
        (
            "sorted([1], 1)",
            "sorted: for parameter key: got int, want callable",
        ),
        (
            "sorted([1], key=None)",
            "sorted: for parameter \"key\": got NoneType, want callable",
        ),
        (
            "sorted([3, 1], reverse=1)",
            "sorted: for parameter \"reverse\": got int, want bool",
        ),
        (
            "sorted([1], revers=True)",
            "sorted: unexpected keyword argument \"revers\"",
        ),
        ("sorted([1, 'a'])", "string < int not implemented"),
        ("max()", "max requires at least one positional argument"),
        ("max(1)", "max: int value is not iterable"),
        ("max([])", "max: argument is an empty sequence"),
        ("min(1, 'a')", "min: string < int not implemented"),
        ("max(1, 'a')", "max: string > int not implemented"),
        (
            "max([1], key=None)",
            "max: for parameter \"key\": got NoneType, want callable",
        ),
        (
            "enumerate(1)",
            "enumerate: for parameter 1: got int, want iterable",
        ),
        (
            "enumerate([1], start=2)",
            "enumerate: unexpected keyword arguments",
        ),
        ("zip([1], 'a')", "zip: argument #2 is not iterable: string"),
        (
            "reversed('ab')",
            "reversed: for parameter 1: got string, want iterable",
        ),
        ("all(1)", "all: for parameter 1: got int, want iterable"),
        (
            "sum([1, 'a'])",
            "sum: at index 1, got string, want int or float",
        ),
        ("sum([1], 2)", "sum: got 2 arguments, want 1"),
        ("sum(1)", "sum: for parameter 1: got int, want iterable"),
        (
            "sum([0.5, ((1 << 500) * (1 << 500) * (1 << 100))])",
            "sum: int too large to convert to float",
        ),
    ]);
}

#[test]
fn universe_attrs_and_fail() {
    check(&[
        ("dir({})", "[\"clear\",\"get\",\"items\",\"keys\",\"pop\",\"popitem\",\"setdefault\",\"update\",\"values\"]"),
        ("dir([])", "[\"append\",\"clear\",\"extend\",\"index\",\"insert\",\"pop\",\"remove\"]"),
        ("dir(b'')", "[\"elems\"]"),
        ("dir(1)", "[]"),
        ("len(dir(''))", "35"),
        ("dir(json)", "[\"decode\",\"encode\",\"indent\"]"),
        ("len(dir(math))", "30"),
        ("hasattr([], 'append')", "true"),
        ("hasattr(1, 'x')", "false"),
        ("getattr(1, 'x', 7)", "7"),
        ("getattr('a,b', 'split')(',')", "[\"a\",\"b\"]"),
        ("getattr(math, 'pi') == math.pi", "true"),
        ("print('x', 1, sep='-')", "null"),
    ]);
    check_err(&[
        ("getattr(1, 'x')", "getattr: int has no .x field or method"),
        (
            "getattr(1, 2)",
            "getattr: for parameter 2: got int, want string",
        ),
        ("fail('a', 1, [2], sep='-')", "fail: a-1-[2]"),
        ("fail('a', 1)", "fail: a 1"),
        ("fail()", "fail: "),
        (
            "fail(sep=1)",
            "fail: for parameter \"sep\": got int, want string",
        ),
        ("print(1, x=2)", "print: unexpected keyword argument \"x\""),
        ("dir(1, 2)", "dir: got 2 arguments, want 1"),
    ]);
}

#[test]
fn list_methods() {
    let r = run("    x = [1]\n    x.append(2)\n    x.extend((3, 4))\n    x.insert(0, 0)\n    x.insert(-1, 9)\n    x.insert(100, 7)\n    y = x.pop()\n    z = x.pop(0)\n    x.remove(9)\n    return [x, y, z, x.index(3), [1, 2, 1].index(1, 1)]");
    assert_eq!(r.unwrap().to_json_string(), "[[1,2,3,4],7,0,2,2]");
    let r = run("    x = [1, 2]\n    x.extend(x)\n    x.clear()\n    return x");
    assert_eq!(r.unwrap().to_json_string(), "[]");
    check_err(&[
        ("[1].pop(5)", "pop: list index 5 out of range [-1:0]"),
        ("[].pop()", "pop: index -1 out of range: empty list"),
        ("[1].pop('a')", "pop: for parameter 1: got string, want int"),
        ("[1].index(2)", "index: value not in list"),
        (
            "[1].index(1, 'a')",
            "index: invalid start index: got string, want int",
        ),
        ("[1].remove(2)", "remove: element not found"),
        ("[].clear(1)", "clear: got 1 arguments, want 0"),
        ("[].append()", "append: got 0 arguments, want 1"),
        (
            "[].extend(1)",
            "extend: for parameter 1: got int, want iterable",
        ),
    ]);
    let e = run("    x = [1]\n    for i in x:\n        x.append(i)\n    return x").unwrap_err();
    assert!(
        format!("{e:?}").contains("append: cannot append to list during iteration"),
        "{e:?}"
    );
    let src = "G = [1]\ndef main():\n    G.append(2)\n    return G\n";
    let e = execute(src, &[], &NoHost, &Limits::default(), None).unwrap_err();
    assert!(
        format!("{e:?}").contains("append: cannot append to frozen list"),
        "{e:?}"
    );
    let src = "G = [1]\ndef main():\n    G.pop()\n    return G\n";
    let e = execute(src, &[], &NoHost, &Limits::default(), None).unwrap_err();
    assert!(
        format!("{e:?}").contains("pop: cannot pop from frozen list"),
        "{e:?}"
    );
}

#[test]
fn dict_methods() {
    let r = run("    d = {'a': 1}\n    d.update([('b', 2)], c=3)\n    d.update({'a': 0})\n    s = d.setdefault('e', 5)\n    s2 = d.setdefault('a', 9)\n    p = d.pop('b')\n    q = d.pop('zz', 'dflt')\n    it = d.popitem()\n    return [d, s, s2, p, q, it, d.get('c'), d.get('x'), d.get('x', 1), d.keys(), d.values(), d.items()]");
    assert_eq!(
        r.unwrap().to_json_string(),
        "[{\"c\":3,\"e\":5},5,0,2,\"dflt\",[\"a\",0],3,null,1,[\"c\",\"e\"],[3,5],[[\"c\",3],[\"e\",5]]]"
    );
    check_err(&[
        ("{}.pop(1)", "pop: missing key"),
        ("{}.popitem()", "popitem: empty dict"),
        ("{}.clear(x=1)", "clear: unexpected keyword arguments"),
        ("{}.get([])", "get: unhashable type: list"),
        ("{}.update(1, 2)", "update: got 2 arguments, want at most 1"),
        ("{}.update(1)", "update: got int, want iterable"),
    ]);
    let src = "G = {'a': 1}\ndef main():\n    G['b'] = 2\n    return G\n";
    let e = execute(src, &[], &NoHost, &Limits::default(), None).unwrap_err();
    assert!(
        format!("{e:?}").contains("cannot insert into frozen hash table"),
        "{e:?}"
    );
    let src = "G = {'a': 1}\ndef main():\n    G.pop('a')\n    return G\n";
    let e = execute(src, &[], &NoHost, &Limits::default(), None).unwrap_err();
    assert!(
        format!("{e:?}").contains("pop: cannot delete from frozen hash table"),
        "{e:?}"
    );
}

#[test]
fn string_methods() {
    check(&[
        ("'hello world'.capitalize()", "\"Hello world\""),
        ("'hELLO'.lower() + 'abc'.upper()", "\"helloABC\""),
        ("'hello wORLD'.title()", "\"Hello World\""),
        ("'banana'.count('a')", "3"),
        ("'banana'.count('a', 2, 4)", "1"),
        ("'banana'.count('')", "7"),
        ("'banana'.find('na')", "2"),
        ("'banana'.rfind('na')", "4"),
        ("'banana'.find('x')", "-1"),
        ("'banana'.find('a', -2)", "5"),
        ("'banana'.index('n', 3)", "4"),
        ("'banana'.rindex('a', 0, 4)", "3"),
        ("'héllo'.find('l')", "3"),
        ("'héllo'.find('l', 2)", "3"),
        ("'abc'.startswith('ab')", "true"),
        ("'abc'.startswith(('x', 'a'))", "true"),
        ("'abc'.endswith('bc', 0, 2)", "false"),
        ("'abc'.endswith('b', 0, 2)", "true"),
        ("'  a b  '.strip()", "\"a b\""),
        ("'xxaxx'.lstrip('x')", "\"axx\""),
        ("'xxaxx'.rstrip('x')", "\"xxa\""),
        ("'a,b,c'.split(',')", "[\"a\",\"b\",\"c\"]"),
        ("'a,b,c'.split(',', 1)", "[\"a\",\"b,c\"]"),
        ("'a,b,c'.rsplit(',', 1)", "[\"a,b\",\"c\"]"),
        ("'aaa'.rsplit('aa', 1)", "[\"\",\"a\"]"),
        ("'  a  b c '.split()", "[\"a\",\"b\",\"c\"]"),
        ("'  a  b c '.split(None, 1)", "[\"a\",\"b c \"]"),
        ("'  a  b c '.rsplit(None, 1)", "[\"  a  b\",\"c\"]"),
        ("'a\\nb\\n'.splitlines()", "[\"a\",\"b\"]"),
        ("'a\\nb\\n'.splitlines(True)", "[\"a\\n\",\"b\\n\"]"),
        ("''.splitlines()", "[]"),
        ("'a-b-c'.partition('-')", "[\"a\",\"-\",\"b-c\"]"),
        ("'a-b-c'.rpartition('-')", "[\"a-b\",\"-\",\"c\"]"),
        ("'abc'.partition('x')", "[\"abc\",\"\",\"\"]"),
        ("'abc'.rpartition('x')", "[\"\",\"\",\"abc\"]"),
        ("'prefix-x'.removeprefix('prefix-')", "\"x\""),
        ("'x.txt'.removesuffix('.txt')", "\"x\""),
        ("'aaa'.replace('a', 'b', 2)", "\"bba\""),
        ("'ab'.replace('', '-')", "\"-a-b-\""),
        // More matches than replace remembers from counting them, and
        // limits on either side of that.
        (
            "'a.b.c.d.e.f.g.h.i.j'.replace('.', '--')",
            "\"a--b--c--d--e--f--g--h--i--j\"",
        ),
        (
            "'a.b.c.d.e.f.g.h.i.j'.replace('.', '', 8)",
            "\"abcdefghi.j\"",
        ),
        (
            "'xyxyxyxyxyxyxyxyxyxy'.replace('xy', 'z', 9)",
            "\"zzzzzzzzzxy\"",
        ),
        ("'aaaaa'.replace('aa', 'b')", "\"bba\""),
        ("('ab' * 5).replace('ba', '')", "\"ab\""),
        ("'-'.join(['a', 'b', 'c'])", "\"a-b-c\""),
        ("''.join([])", "\"\""),
        ("'abc'.isalpha()", "true"),
        ("'ab1'.isalnum()", "true"),
        ("'123'.isdigit()", "true"),
        ("''.isdigit()", "false"),
        ("' \\t'.isspace()", "true"),
        ("'abc1'.islower()", "true"),
        ("'ABC1'.isupper()", "true"),
        ("'123'.islower()", "false"),
        ("'Hello World'.istitle()", "true"),
        ("'Hello world'.istitle()", "false"),
        ("list('ab'.elems())", "[\"a\",\"b\"]"),
        ("list('aé'.codepoints())", "[\"a\",\"é\"]"),
        ("list('aé'.elem_ords())", "[97,195,169]"),
        ("list('aé'.codepoint_ords())", "[97,233]"),
        ("type('ab'.elems())", "\"string.elems\""),
        ("type('ab'.codepoint_ords())", "\"string.codepoints\""),
        ("repr('ab'.elem_ords())", "\"\\\"ab\\\".elem_ords()\""),
        ("type(b'ab'.elems())", "\"bytes.elems\""),
        ("list(b'ab'.elems())", "[97,98]"),
        ("'{} {}'.format(1, 'a')", "\"1 a\""),
        ("'{1}{0}'.format(1, 2)", "\"21\""),
        ("'{x}!'.format(x=[1])", "\"[1]!\""),
        ("'{!r} {!s}'.format('a', 'b')", "\"\\\"a\\\" b\""),
        ("'{{}} {}'.format(1)", "\"{} 1\""),
        ("'}}'.format()", "\"}\""),
    ]);
    check_err(&[
        ("'a'.split(1)", "split: got int for separator, want string"),
        ("'a'.split('')", "split: empty separator"),
        ("'a'.rsplit('')", "split: empty separator"),
        (
            "'abc'.count(1)",
            "count: for parameter 1: got int, want string",
        ),
        ("'a'.index('b')", "index: substring not found"),
        ("'a'.rindex('b')", "rindex: substring not found"),
        (
            "'a,b'.split(',', 'x')",
            "split: for parameter 2: got string, want int",
        ),
        ("'a'.join([1])", "join: in list, want string, got int"),
        (
            "'a'.join('ab')",
            "join: for parameter 1: got string, want iterable",
        ),
        ("'a'.partition('')", "partition: empty separator"),
        (
            "'a'.startswith(1)",
            "startswith: got int, want string or tuple of string",
        ),
        (
            "'a'.startswith((1,))",
            "startswith: want string, got int, for element 0",
        ),
        (
            "'a'.strip(None)",
            "strip: for parameter 1: got NoneType, want string",
        ),
        ("'a'.upper(1)", "upper: got 1 arguments, want 0"),
        (
            "'a'.splitlines(1)",
            "splitlines: for parameter 1: got int, want bool",
        ),
        ("'{} {}'.format(1)", "format: tuple index out of range"),
        (
            "'{0} {}'.format(1, 2)",
            "format: cannot switch from manual field specification to automatic field numbering",
        ),
        (
            "'{} {0}'.format(1, 2)",
            "format: cannot switch from automatic field numbering to manual field specification",
        ),
        ("'{x}'.format(1)", "format: keyword x not found"),
        (
            "'{a.b}'.format(1)",
            "format: attribute syntax x.y is not supported in replacement fields: a.b",
        ),
        ("'{!x}'.format(1)", "format: unknown conversion \"x\""),
        (
            "'{:d}'.format(1)",
            "format spec features not supported in replacement fields: d",
        ),
        ("'}'.format()", "format: single '}' in format"),
        ("'{'.format()", "format: unmatched '{' in format"),
    ]);
}

#[test]
fn json_encode() {
    check(&[
        ("json.encode(None)", "\"null\""),
        (
            "json.encode([True, False, 1, 1.0, 1e6, 'a'])",
            "\"[true,false,1,1.0,1e+06,\\\"a\\\"]\"",
        ),
        (
            "json.encode({'b': 1, 'a': (2, 3)})",
            "\"{\\\"a\\\":[2,3],\\\"b\\\":1}\"",
        ),
        ("json.encode((1 << 70))", "\"1180591620717411303424\""),
        ("json.encode('<é>')", "\"\\\"\\\\u003cé\\\\u003e\\\"\""),
        ("json.encode('<a>')", "\"\\\"<a>\\\"\""),
        ("json.encode('a\\nb')", "\"\\\"a\\\\nb\\\"\""),
        ("json.encode(range(3))", "\"[0,1,2]\""),
        ("json.encode('\\u2028')", "\"\\\"\\\\u2028\\\"\""),
    ]);
    check_err(&[
        (
            "json.encode(float('nan'))",
            "json.encode: cannot encode non-finite float nan",
        ),
        (
            "json.encode({1: 2})",
            "json.encode: dict has int key, want string",
        ),
        (
            "json.encode({'k': [1, float('inf')]})",
            "json.encode: in dict key \"k\": at list index 1: cannot encode non-finite float +inf",
        ),
        (
            "json.encode(len)",
            "json.encode: cannot encode builtin_function_or_method as JSON",
        ),
        ("json.encode()", "json.encode: got 0 arguments, want 1"),
    ]);
    let e = run("    x = []\n    x.append(x)\n    return json.encode(x)").unwrap_err();
    assert!(
        format!("{e:?}").contains("json.encode: at list index 0: cycle in JSON structure"),
        "{e:?}"
    );
}

#[test]
fn json_decode() {
    check(&[
        (
            "json.decode('[1, 2.5, -3e2, \"x\", null, true, false]')",
            "[1,2.5,-300.0,\"x\",null,true,false]",
        ),
        (
            "json.decode(' {\"a\": {\"b\": []}, \"a\": 1, \"c\": 2} ')",
            "{\"a\":1,\"c\":2}",
        ),
        (
            "str(json.decode('123456789012345678901234567890'))",
            "\"123456789012345678901234567890\"",
        ),
        (
            "json.decode('\"a\\\\u00e9\\\\n\\\\ud83d\\\\ude00\"')",
            "\"aé\\n😀\"",
        ),
        ("json.decode('\"\\\\ud800\"')", "\"\u{fffd}\""),
        ("json.decode('x', default=7)", "7"),
        ("json.decode('[1,', None)", "null"),
        ("type(json.decode('1.0'))", "\"float\""),
        (
            "json.decode(json.encode({'k': [1, 'é']}))",
            "{\"k\":[1,\"é\"]}",
        ),
    ]);
    check_err(&[
        (
            "json.decode('')",
            "json.decode: at offset 0, unexpected end of file",
        ),
        (
            "json.decode('[1 2]')",
            "json.decode: at offset 3, got '2', want ',' or ']'",
        ),
        (
            "json.decode('01')",
            "json.decode: at offset 2, invalid number: 01",
        ),
        (
            "json.decode('1 2')",
            "json.decode: at offset 2, unexpected character '2' after value",
        ),
        (
            "json.decode('{1: 2}')",
            "json.decode: at offset 2, got int for object key, want string",
        ),
        (
            "json.decode('{\"a\" 2}')",
            "json.decode: at offset 5, after object key, got '2', want ':' ",
        ),
        (
            "json.decode('\"abc')",
            "json.decode: at offset 0, unclosed string literal",
        ),
        (
            "json.decode('\"\\\\x\"')",
            "json.decode: at offset 4, invalid character 'x' in string escape code",
        ),
        (
            "json.decode('nul')",
            "json.decode: at offset 0, unexpected character 'n'",
        ),
        (
            "json.decode(1)",
            "json.decode: for parameter x: got int, want string",
        ),
        (
            "json.decode(x='1')",
            "json.decode: unexpected keyword argument x",
        ),
    ]);
    let deep = format!("    return json.decode('{}')", "[".repeat(10000));
    let e = run(&deep).unwrap_err();
    assert!(format!("{e:?}").contains("nesting too deep"), "{e:?}");
}

#[test]
fn json_indent() {
    check(&[
        ("json.indent('{\"a\": [1, 2], \"b\": {}, \"c\": [ ]}')", "\"{\\n\\t\\\"a\\\": [\\n\\t\\t1,\\n\\t\\t2\\n\\t],\\n\\t\\\"b\\\": {},\\n\\t\\\"c\\\": []\\n}\""),
        ("json.indent('[1]', prefix='>', indent='  ')", "\"[\\n>  1\\n>]\""),
        ("json.indent(' 1 \\n')", "\"1 \\n\""),
    ]);
    check_err(&[
        (
            "json.indent('x')",
            "json.indent: invalid character 'x' looking for beginning of value",
        ),
        (
            "json.indent('[1 2]')",
            "json.indent: invalid character '2' after array element",
        ),
        (
            "json.indent('{\"a\" 1}')",
            "json.indent: invalid character '1' after object key",
        ),
        (
            "json.indent('{1}')",
            "json.indent: invalid character '1' looking for beginning of object key string",
        ),
        (
            "json.indent('[1')",
            "json.indent: unexpected end of JSON input",
        ),
        (
            "json.indent('1 2')",
            "json.indent: invalid character '2' after top-level value",
        ),
        (
            "json.indent('tru')",
            "json.indent: unexpected end of JSON input",
        ),
        (
            "json.indent('trux')",
            "json.indent: invalid character 'x' in literal true (expecting 'e')",
        ),
        (
            "json.indent('-x')",
            "json.indent: invalid character 'x' in numeric literal",
        ),
        (
            "json.indent('1', 2)",
            "json.indent: got 2 arguments, want 1",
        ),
    ]);
}

#[test]
fn math_module() {
    check(&[
        ("math.sqrt(4)", "2.0"),
        ("str(math.sqrt(-1))", "\"nan\""),
        ("str(math.log(0))", "\"-inf\""),
        ("str(math.gamma(0))", "\"+inf\""),
        ("math.gamma(5)", "24.0"),
        ("math.ceil(1.2)", "2"),
        ("math.floor(-1.2)", "-2"),
        ("math.ceil(5)", "5"),
        ("math.round(2.5)", "3.0"),
        ("math.round(-2.5)", "-3.0"),
        ("math.log(8, 2)", "3.0"),
        ("math.log(math.e)", "1.0"),
        ("math.mod(-7, 3)", "-1.0"),
        ("math.remainder(7, 2)", "-1.0"),
        ("math.pow(2, 10)", "1024.0"),
        ("math.fabs(-2)", "2.0"),
        ("math.copysign(3, -0.0)", "-3.0"),
        ("math.hypot(3, 4)", "5.0"),
        ("math.degrees(math.pi)", "180.0"),
        ("math.radians(180) == math.pi", "true"),
        ("math.atan2(1, 1) == math.pi / 4", "true"),
        (
            "str(math.sqrt(((1 << 500) * (1 << 500) * (1 << 100))))",
            "\"+inf\"",
        ),
        ("math.exp(0)", "1.0"),
        ("math.cos(0) + math.sin(0) + math.tan(0)", "1.0"),
        ("math.acos(1) + math.asin(0) + math.atan(0)", "0.0"),
        ("math.cosh(0) + math.sinh(0) + math.tanh(0)", "1.0"),
        ("math.acosh(1) + math.asinh(0) + math.atanh(0)", "0.0"),
        ("str(math.floor(1e20))", "\"100000000000000000000\""),
    ]);
    check_err(&[
        (
            "math.sqrt('x')",
            "sqrt: for parameter 1: got string, want float or int",
        ),
        ("math.sqrt()", "sqrt: got 0 arguments, want 1"),
        ("math.pow(1)", "pow: got 1 arguments, want 2"),
        ("math.log(2, 1)", "division by zero"),
        ("math.ceil('x')", "got string, want float or int"),
        (
            "math.floor(float('nan'))",
            "cannot convert float NaN to integer",
        ),
        ("math.sqrt(x=1)", "sqrt: unexpected keyword arguments"),
        ("math.nope", "module has no .nope field or method"),
        (
            "math.sqr",
            "module has no .sqr field or method (did you mean .sqrt?)",
        ),
        (
            "json.Encode",
            "module has no .Encode field or method (did you mean .encode?)",
        ),
    ]);
}

#[test]
fn builtins_respect_budgets() {
    let limits = Limits {
        max_heap_bytes: 1 << 20,
        ..Limits::default()
    };
    let src = "def main():\n    return len(list(range(10000000)))\n";
    let e = execute(src, &[], &NoHost, &limits, None).unwrap_err();
    assert_eq!(e, ExecError::ResourceLimit(LimitKind::HeapBytes));
    let src = "def main():\n    return len(','.join(['x' * 1000] * 2000))\n";
    let e = execute(src, &[], &NoHost, &limits, None).unwrap_err();
    assert_eq!(e, ExecError::ResourceLimit(LimitKind::HeapBytes));
}

/// Mutating methods on frozen globals, with starlark-go's texts.
#[test]
fn frozen_receivers() {
    let cases = [
        ("G.clear()", "cannot clear frozen hash table"),
        ("E.clear()", "cannot clear frozen hash table"),
        ("L.clear()", "clear: cannot clear frozen list"),
        (
            "G.setdefault('z')",
            "setdefault: cannot insert into frozen hash table",
        ),
        ("L.extend([])", "extend: cannot extend frozen list"),
        ("L.insert(0, 1)", "insert: cannot insert into frozen list"),
        ("L.remove(1)", "remove: cannot remove from frozen list"),
        (
            "G.popitem()",
            "popitem: cannot delete from frozen hash table",
        ),
        (
            "G.update(a=2)",
            "update: cannot insert into frozen hash table",
        ),
    ];
    for (expr, want) in cases {
        let src = format!("G = {{'a': 1}}\nE = {{}}\nL = [1]\ndef main():\n    return {expr}\n");
        let e = execute(&src, &[], &NoHost, &Limits::default(), None).unwrap_err();
        match e {
            ExecError::InvalidProgram(d) => {
                assert!(d.ends_with(&format!(": {want}")), "{expr}: {d}")
            }
            e => panic!("{expr}: {e:?}"),
        }
    }
    let src = "G = {'a': 1}\ndef main():\n    return [G.update(), G.setdefault('a')]\n";
    let d = execute(src, &[], &NoHost, &Limits::default(), None).unwrap();
    assert_eq!(d.to_json_string(), "[null,1]");
}

#[test]
fn string_edge_cases() {
    check(&[
        ("'héllo'.count('')", "6"),
        ("'abc'.count('', 1)", "3"),
        ("'héllo'.find('', 2)", "2"),
        ("'aXbXc'.split('X', 0)", "[\"aXbXc\"]"),
        ("' a b '.split(None, 0)", "[\"a b \"]"),
        ("'a'.replace('a', 'b', -5)", "\"b\""),
    ]);
}

/// `upper` and `lower` map ASCII strings bytewise and everything else per
/// character; both paths give starlark-ref's results (the long string spans
/// several of the blocks between deadline checks).
#[test]
fn case_mappings_of_ascii_and_other_text() {
    let r = run("    s = 'aB1-zZ@[`{' * 700\n    return [s.upper() == 'AB1-ZZ@[`{' * 700, s.lower() == 'ab1-zz@[`{' * 700, len(s.upper()), 'straße ǅ ǈ ΣΑΣ'.upper(), 'straße ǅ ǈ ΣΑΣ'.lower(), ''.upper(), ''.lower(), 'é'.upper()]");
    assert_eq!(
        r.unwrap().to_json_string(),
        r#"[true,true,7000,"STRAßE Ǆ Ǉ ΣΑΣ","straße ǆ ǉ σασ","","","É"]"#
    );
}

/// String keys of small dicts are found by text alone (no hash): deleted
/// entries, keys of other types and absent keys behave as starlark-ref.
#[test]
fn small_dicts_find_string_keys() {
    let r = run("    d = {'a': 1, 'b': 2, 1: 'one'}\n    d.pop('a')\n    return [d.get('a'), 'a' in d, d.get('b'), d.get(1), d.get('1'), 'b' in d, {}.get('x'), 'x' in {}, d['b']]");
    assert_eq!(
        r.unwrap().to_json_string(),
        r#"[null,false,2,"one",null,true,null,false,2]"#
    );
}
