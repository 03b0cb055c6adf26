"""Batch runner for the reference side of the differential fuzzer.

Reads programs from stdin, one JSON string per line, runs each under
starlark-go in this process (through the PyPI binding `starlark-go`), and
writes one JSON string per line to stdout: the outcome in the form of the
golden `.expected` lines (`{"result":...}`, `syntax error: ...`,
`resolve error: ...`, `runtime error: ...` or `invalid program: ...`).

Each program is loaded the way codemode loads it: the file runs with
starlark-go's default file options, then `main()` is called in a fresh
interpreter and its result is converted to JSON (ints must fit in 64 bits,
floats must be finite, dict keys must be strings).
"""

import json
import math
import sys

try:
    import starlark_go as sg
except ImportError:
    sys.stderr.write(
        "ref_batch.py: this Python has no `starlark_go` module; point "
        "DIFFTEST_PYTHON at a Python with `pip install starlark-go==1.0.1`\n"
    )
    sys.exit(3)


class Rejected(Exception):
    """The result cannot be converted to JSON."""


def convert(v):
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        if not -(2**63) <= v < 2**63:
            raise Rejected("int out of signed 64-bit range in result")
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise Rejected("non-finite float in result")
        return v
    if isinstance(v, (list, tuple)):
        return [convert(x) for x in v]
    if isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            raise Rejected("dict with non-string key in result")
        return {k: convert(x) for k, x in v.items()}
    raise Rejected("unsupported result type " + type(v).__name__)


def discard(_msg):
    pass


# The binding cannot hand a string holding invalid UTF-8 to Python. codemode
# turns each invalid byte of a result string into U+FFFD, as Go decodes
# strings (and as Go's JSON encoder writes them), so when the conversion
# fails, the result is rebuilt inside starlark-go with every string decoded
# by `codepoint_ords` (U+FFFD for each invalid byte) and converted again.
# An explicit stack: the default dialect has no recursion.
LOSSY = """
def _dt_fix(s):
    return "".join([chr(c) for c in s.codepoint_ords()])

def _dt_lossy(v):
    root = [None]
    stack = [(v, root, 0)]
    for _ in range(100000000):
        if not stack:
            break
        x, parent, key = stack.pop()
        t = type(x)
        if t == "string":
            parent[key] = _dt_fix(x)
        elif t == "list" or t == "tuple":
            new = [None] * len(x)
            parent[key] = new
            for i, e in enumerate(x):
                stack.append((e, new, i))
        elif t == "dict":
            new = {}
            parent[key] = new
            for k, e in x.items():
                k = _dt_fix(k) if type(k) == "string" else k
                new[k] = None
                stack.append((e, new, k))
        else:
            parent[key] = x
    return root[0]
"""


def outcome(src):
    s = sg.Starlark()
    try:
        s.exec(src, filename="<codemode>", print=discard)
    except sg.SyntaxError as e:
        return "syntax error: %s" % e
    except sg.ResolveError as e:
        return "resolve error: %s" % e
    except sg.EvalError as e:
        return "runtime error: %s" % e
    if "main" not in s.globals():
        return "invalid program: main is missing"
    try:
        result = s.eval("main()", filename="<codemode>", print=discard)
    except sg.EvalError as e:
        return "runtime error: %s" % e
    except sg.ConversionToPythonFailed as e:
        try:
            s.exec(LOSSY, filename="<difftest>", print=discard)
            result = s.eval("_dt_lossy(main())", filename="<codemode>", print=discard)
        except (sg.EvalError, sg.ConversionToPythonFailed):
            return "invalid program: result not convertible: %s" % e
    try:
        value = convert(result)
    except Rejected as e:
        return "invalid program: %s" % e
    return json.dumps({"result": value}, separators=(",", ":"), ensure_ascii=False)


def main():
    out = sys.stdout
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        try:
            src = json.loads(line)
            text = outcome(src)
        except Exception as e:  # a crash of the binding, reported per program
            text = "reference crashed: %s: %s" % (type(e).__name__, e)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from invalid UTF-8
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        out.write(json.dumps(text))
        out.write("\n")
        out.flush()


main()
