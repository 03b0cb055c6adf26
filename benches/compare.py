#!/usr/bin/env python3
"""Runs the programs of benches/programs under codemode (`codemode run`, the
release binary), starlark-go (PyPI `starlark-go`), starlark-rust (PyPI
`starlark-pyo3`) and CPython in one run on one machine, checks that every
engine returns the same result, and prints the time per iteration of each
engine, the ratios, and their geometric means.

    cargo build --release -p codemode-server
    python3 -m venv ~/.cache/codemode-bench-peers
    ~/.cache/codemode-bench-peers/bin/pip install starlark-go==1.0.1 starlark-pyo3==2026.1.3
    ~/.cache/codemode-bench-peers/bin/python benches/compare.py \\
        --codemode target/release/codemode [--repeat 5] [--scale 1]

Method. Every program is `def main(): ...` whose work grows with the `N`
in `range(N)`. Each engine runs each program twice: with `N` and with
`N = 1`, each the best of `--repeat` runs, and the figure is
`(t(N) - t(1)) / (N - 1)`. The `N = 1` run carries everything that does
not grow with `N`: for `codemode run` the process start, building the demo
catalog, parsing, compiling and printing; for the in-process engines
parsing and setting up a module. So every engine is charged for the loop
alone.
codemode runs with budget accounting on (step, heap and time limits set
high enough for the program, but still counted and checked).

Times are CPU time (user + system, of the Python process for the
in-process engines and of the child process for `codemode run`), not wall
time: on a shared machine whose load exceeds its cores, wall time mostly
measures how long a process waited for a core. `--wall` times wall clock
instead, for a quiet machine.

CPython runs the `.star` file as Python source, except for the json
programs, which have a `.py` twin (Starlark's json module is not Python's).
The starlark-go binding has no json module, so its json cells are empty and
those programs are left out of its geometric mean."""

import argparse
import json
import math
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
PROGRAMS_DIR = HERE / "programs"

# (program, N): N is chosen so that codemode's loop runs tens of
# milliseconds, well above the noise of process start.
PROGRAMS = [
    ("loop_arith", 1_000_000),
    ("calls", 500_000),
    ("closures", 500_000),
    ("string_build", 200_000),
    ("dict_set_get", 300_000),
    ("dict_count", 300_000),
    ("list_append", 1_000_000),
    ("list_comprehension", 1_000_000),
    ("list_work", 300_000),
    ("sorted_key", 300_000),
    ("nested_loops", 200_000),
    ("methods", 100_000),
    ("percent_format", 100_000),
    ("json_encode", 50_000),
    ("json_decode", 50_000),
]

ENGINES = ["codemode", "starlark-go", "starlark-rust", "CPython"]


def source(name, n, python=False):
    twin = PROGRAMS_DIR / f"{name}.py"
    path = twin if python and twin.exists() else PROGRAMS_DIR / f"{name}.star"
    return path.read_text().replace("range(N)", f"range({n})")


def clock(wall):
    """Seconds so far: wall time, or the CPU time (user + system) of this
    process and of its waited-for children."""
    if wall:
        return time.perf_counter()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def best(fn, repeat, wall=False):
    """The fastest of `repeat` runs of `fn`, and the result of the last."""
    times, result = [], None
    for _ in range(repeat):
        t0 = clock(wall)
        result = fn()
        times.append(clock(wall) - t0)
    return min(times), result


def normalize(v):
    """A result as comparable JSON text."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


class Codemode:
    name = "codemode"

    def __init__(self, binary, tmp):
        self.binary = binary
        self.tmp = pathlib.Path(tmp)

    def runner(self, name, n):
        path = self.tmp / f"{name}-{n}.star"
        path.write_text(source(name, n))
        cmd = [self.binary, "run",
               "--max-steps", str(10**15), "--max-time-ms", "600000",
               "--max-heap-bytes", str(8 << 30),
               "--max-value-bytes", str(1 << 30), str(path)]

        def run():
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(f"codemode run {name}: {p.stderr.strip()}")
            return json.loads(p.stdout)["result"]
        return run


class StarlarkGo:
    name = "starlark-go"

    def __init__(self):
        import starlark_go
        self.mod = starlark_go

    def runner(self, name, n):
        if name.startswith("json"):
            return None
        src = source(name, n)

        def run():
            s = self.mod.Starlark()
            s.exec(src)
            return s.eval("main()")
        return run


class StarlarkRust:
    name = "starlark-rust"

    def __init__(self):
        import starlark
        self.sl = starlark
        self.globals = starlark.Globals.extended_by(
            [starlark.LibraryExtension.Json])

    def runner(self, name, n):
        sl = self.sl
        src = source(name, n)

        def run():
            m = sl.Module()
            sl.eval(m, sl.parse(f"{name}.star", src, sl.Dialect.standard()),
                    self.globals)
            call = sl.parse("call.star", "main()", sl.Dialect.standard())
            return sl.eval(m, call, self.globals)
        return run


class CPython:
    name = "CPython"

    def runner(self, name, n):
        src = source(name, n, python=True)

        def run():
            env = {}
            exec(compile(src, name, "exec"), env)
            return env["main"]()
        return run


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--codemode", default=os.environ.get(
        "CODEMODE_BIN", "target/release/codemode"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies every N")
    ap.add_argument("--only", nargs="*", help="program names to run")
    ap.add_argument("--wall", action="store_true",
                    help="time wall clock instead of CPU time")
    args = ap.parse_args()

    engines = []
    with tempfile.TemporaryDirectory() as tmp:
        engines.append(Codemode(args.codemode, tmp))
        for cls in (StarlarkGo, StarlarkRust):
            try:
                engines.append(cls())
            except ImportError as e:
                print(f"note: {cls.name} not available ({e})", file=sys.stderr)
        engines.append(CPython())
        names = [e.name for e in engines]

        # Start-up of `codemode run` for the record: an empty main.
        empty = pathlib.Path(tmp) / "empty.star"
        empty.write_text("def main():\n    return 0\n")
        startup, _ = best(lambda: subprocess.run(
            [args.codemode, "run", str(empty)], capture_output=True,
            check=True), args.repeat, args.wall)

        rows = []
        for name, n in PROGRAMS:
            if args.only and name not in args.only:
                continue
            n = max(2, int(n * args.scale))
            per_iter, results = {}, {}
            for e in engines:
                full, one = e.runner(name, n), e.runner(name, 1)
                if full is None:
                    continue
                t1, _ = best(one, args.repeat, args.wall)
                t, res = best(full, args.repeat, args.wall)
                per_iter[e.name] = max(t - t1, 0.0) / (n - 1) * 1e9
                results[e.name] = normalize(res)
            distinct = set(results.values())
            if len(distinct) != 1:
                sys.exit(f"{name}: engines disagree: {results}")
            rows.append((name, n, per_iter, distinct.pop()))
            print(f"{name:20} N={n:<9} " + "  ".join(
                f"{k} {v:8.1f}" for k, v in per_iter.items()) + " ns/iter",
                file=sys.stderr)

    load = os.getloadavg()
    what = "wall time" if args.wall else "CPU time"
    print(f"\n{what}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"`codemode run` start-up (empty main; subtracted with the N = 1 run): "
          f"{startup * 1e3:.1f} ms\n")
    others = [x for x in names if x != "codemode"]
    print("| program | N | " + " | ".join(f"{x} ns/iter" for x in names)
          + " | " + " | ".join(f"vs {x}" for x in others) + " |")
    print("|---|---:|" + "---:|" * (len(names) + len(others)))
    ratios = {x: [] for x in others}
    for name, n, per, _ in rows:
        cells = [f"{per[x]:.1f}" if x in per else "—" for x in names]
        rcells = []
        for x in others:
            if x in per and per.get("codemode"):
                r = per[x] / per["codemode"]
                ratios[x].append(r)
                rcells.append(f"{r:.1f}x")
            else:
                rcells.append("—")
        print(f"| `{name}` | {n:,} | " + " | ".join(cells) + " | "
              + " | ".join(rcells) + " |")
    print("| **geometric mean** | | " + " | ".join("" for _ in names) + " | "
          + " | ".join(f"**{geomean(ratios[x]):.1f}x**" for x in others)
          + " |")


if __name__ == "__main__":
    main()
