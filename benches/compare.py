#!/usr/bin/env python3
"""Runs benchmark programs under codemode (the release binary, served and
as `codemode run`), starlark-go (PyPI `starlark-go`), starlark-rust (PyPI
`starlark-pyo3`) and CPython in one run on one machine, checks that every
engine returns the same result, and prints the time per unit of work of each
engine, the ratios, and their geometric means.

Two suites: `agent` (benches/programs/agent: data shaping the way agent
programs do it, records in dicts, grouping, joining, sorting, reports,
json, string methods; N is the number of records) is the headline;
`loops` (benches/programs: the interpreter's hot loops; N is the loop
count) is the second table. `--suite all` runs both.

    cargo build --release -p codemode-server
    python3 -m venv ~/.cache/codemode-bench-peers
    ~/.cache/codemode-bench-peers/bin/pip install starlark-go==1.0.1 starlark-pyo3==2026.1.3
    ~/.cache/codemode-bench-peers/bin/python benches/compare.py \\
        --codemode target/release/codemode [--suite agent|loops|all] [--repeat 5]

Method. Every program is `def main(): ...` whose work grows with `N`.
Each engine runs each program twice: with `N` and with a small `N0` (1 for
the loops, 10 for the agent programs), each the best of `--repeat` runs, and
the figure is `(t(N) - t(N0)) / (N - N0)`. The `N0` run carries everything
that does not grow with `N`: for `codemode run` the process start, building
the demo catalog, parsing, compiling and printing; for the in-process
engines parsing and setting up a module. So every engine is charged for the
work alone.

codemode is measured twice. The `codemode` column is the product as
deployed, measured the way the peers are: one long-lived process (here
`codemode serve` on stdio) runs every program, each as an `execute` call,
timed by the CPU time of the server's threads during the call (their
`schedstat`). The `codemode run` column starts a fresh process for every
run. Fresh memory is expensive on virtual machines (the host, then the
kernel, must back and zero every page): a server pays for it once, as do
the peers, which run in this Python process; `codemode run` pays for it on
every run. The ratios are of the `codemode` column; the geometric means of
`codemode run` against the peers follow each table. For codemode the
table also gives the heap bytes the `N` run
needs: the smallest `--max-heap-bytes` under which it still succeeds, found
by bisection (to within 1%).
codemode runs with budget accounting on (step, heap and time limits set
high enough for the program, but still counted and checked).

Times are CPU time (user + system, of the Python process for the
in-process engines, of the child process for `codemode run`, of the
server's threads for `codemode`), not wall time: on a shared machine
whose load exceeds its cores, wall time mostly measures how long a
process waited for a core. `--wall` times wall clock
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
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent

# (program, N): N is chosen so that codemode's work takes tens of
# milliseconds, well above the noise of process start.
AGENT = [
    ("group_by", 20_000),
    ("join", 20_000),
    ("filter_sort", 10_000),
    ("report", 20_000),
    ("json_roundtrip", 5_000),
    ("log_lines", 10_000),
    ("word_count", 50_000),
    ("list_ops", 100_000),
    ("flatten", 10_000),
    ("pages", 50_000),
    ("csv", 20_000),
    ("markdown", 20_000),
    ("helpers", 20_000),
]

LOOPS = [
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

# suite: (directory, programs, N0)
SUITES = {
    "agent": (HERE / "programs" / "agent", AGENT, 10),
    "loops": (HERE / "programs", LOOPS, 1),
}

ENGINES = ["codemode", "starlark-go", "starlark-rust", "CPython"]


def source(name, n, python=False):
    """The program `name` (of either suite) with N replaced by n."""
    for directory, _, _ in SUITES.values():
        star = directory / f"{name}.star"
        if star.exists():
            twin = directory / f"{name}.py"
            path = twin if python and twin.exists() else star
            return re.sub(r"\bN\b", str(n), path.read_text())
    raise SystemExit(f"no program named {name}")


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
        t = clock(wall) - t0
        if isinstance(result, Timed):
            result, t = result.result, result.seconds
        times.append(t)
    return min(times), result


def normalize(v):
    """A result as comparable JSON text."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


class Codemode:
    """codemode as a fresh process per program: `codemode run`."""
    name = "codemode run"

    def __init__(self, binary, tmp):
        self.binary = binary
        self.tmp = pathlib.Path(tmp)

    def command(self, name, n, heap):
        path = self.tmp / f"{name}-{n}.star"
        path.write_text(source(name, n))
        return [self.binary, "run",
                "--max-steps", str(10**15), "--max-time-ms", "600000",
                "--max-heap-bytes", str(heap),
                "--max-value-bytes", str(1 << 30), str(path)]

    def runner(self, name, n):
        cmd = self.command(name, n, 8 << 30)

        def run():
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(f"codemode run {name}: {p.stderr.strip()}")
            return json.loads(p.stdout)["result"]
        return run

    def heap_needed(self, name, n):
        """The smallest heap budget (bytes, within 1%) under which the
        program succeeds."""
        def ok(heap):
            p = subprocess.run(self.command(name, n, heap),
                               capture_output=True, text=True)
            return p.returncode == 0
        lo, hi = 1 << 10, 8 << 30
        if not ok(hi):
            return None
        while hi - lo > max(lo // 100, 1024):
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid
            else:
                lo = mid
        return hi


class Timed:
    """A result with the CPU (or wall) seconds it took, for an engine whose
    work runs in another process that is not waited for."""

    def __init__(self, result, seconds):
        self.result, self.seconds = result, seconds


class CodemodeServe:
    """codemode as deployed: one `codemode serve` process (stdio MCP) that
    runs every program as an `execute` call, the way the in-process peers
    run theirs in one process. Each call is timed by the CPU time of the
    server's threads (their `schedstat`, in nanoseconds), or by the wall
    clock around the call with `--wall`."""
    name = "codemode"

    def __init__(self, binary, wall):
        self.wall = wall
        self.proc = subprocess.Popen(
            [binary, "serve",
             "--max-steps", str(10**15), "--max-time-ms", "600000",
             "--max-heap-bytes", str(8 << 30),
             "--max-value-bytes", str(1 << 30)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "compare.py", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                   "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("codemode serve exited")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                return msg

    def cpu(self):
        """Seconds on a CPU so far, summed over the server's threads."""
        total, read = 0, 0
        try:
            tasks = list(pathlib.Path(f"/proc/{self.proc.pid}/task").iterdir())
        except FileNotFoundError:
            tasks = []
        for task in tasks:
            try:
                total += int((task / "schedstat").read_text().split()[0])
                read += 1
            except (FileNotFoundError, ProcessLookupError):
                pass  # a thread that ended meanwhile
        if not read:
            sys.exit("compare.py: cannot read the CPU time of codemode serve's "
                     "threads (/proc/PID/task/*/schedstat); use --wall")
        return total / 1e9

    def runner(self, name, n):
        code = source(name, n)

        def run():
            t0 = time.perf_counter() if self.wall else self.cpu()
            msg = self.request("tools/call", {
                "name": "execute", "arguments": {"source": code}})
            t = (time.perf_counter() if self.wall else self.cpu()) - t0
            result = msg.get("result", {})
            if "error" in msg or result.get("isError"):
                raise RuntimeError(f"codemode execute {name}: {msg}")
            return Timed(result["structuredContent"]["result"], t)
        return run

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


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
    ap.add_argument("--suite", choices=["agent", "loops", "all"],
                    default="agent", help="which programs (default: agent)")
    ap.add_argument("--only", nargs="*", help="program names to run")
    ap.add_argument("--no-heap", action="store_true",
                    help="skip measuring codemode's heap bytes")
    ap.add_argument("--wall", action="store_true",
                    help="time wall clock instead of CPU time")
    args = ap.parse_args()

    engines = []
    with tempfile.TemporaryDirectory() as tmp:
        served = CodemodeServe(args.codemode, args.wall)
        cold = Codemode(args.codemode, tmp)
        engines += [served, cold]
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

        suites = ["agent", "loops"] if args.suite == "all" else [args.suite]
        tables = []
        for suite in suites:
            _, programs, n0 = SUITES[suite]
            rows = []
            for name, n in programs:
                if args.only and name not in args.only:
                    continue
                n = max(n0 + 1, int(n * args.scale))
                per_iter, results = {}, {}
                for e in engines:
                    full, base = e.runner(name, n), e.runner(name, n0)
                    if full is None:
                        continue
                    t0, _ = best(base, args.repeat, args.wall)
                    t, res = best(full, args.repeat, args.wall)
                    per_iter[e.name] = max(t - t0, 0.0) / (n - n0) * 1e9
                    results[e.name] = normalize(res)
                distinct = set(results.values())
                if len(distinct) != 1:
                    sys.exit(f"{name}: engines disagree: {results}")
                heap = None if args.no_heap else cold.heap_needed(name, n)
                rows.append((name, n, per_iter, heap))
                print(f"{suite}/{name:18} N={n:<9} " + "  ".join(
                    f"{k} {v:8.1f}" for k, v in per_iter.items())
                    + " ns/unit", file=sys.stderr)
            tables.append((suite, rows))
        served.close()

    load = os.getloadavg()
    what = "wall time" if args.wall else "CPU time"
    print(f"\n{what}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"`codemode run` start-up (empty main; subtracted with the N = 1 run): "
          f"{startup * 1e3:.1f} ms\n")
    others = [x for x in names if not x.startswith("codemode")]
    for suite, rows in tables:
        unit = "record" if suite == "agent" else "iteration"
        print(f"\n**{suite}** (ns per {unit}; ratio = the peer's time over "
              "codemode's, above 1 codemode is faster)\n")
        print("| program | N | " + " | ".join(f"{x}" for x in names)
              + " | codemode heap | " + " | ".join(f"vs {x}" for x in others)
              + " |")
        print("|---|---:|" + "---:|" * (len(names) + 1 + len(others)))
        ratios = {x: [] for x in others}
        for name, n, per, heap in rows:
            cells = [f"{per[x]:.1f}" if x in per else "—" for x in names]
            rcells = []
            for x in others:
                if x in per and per.get("codemode"):
                    r = per[x] / per["codemode"]
                    ratios[x].append(r)
                    rcells.append(f"{r:.2f}x")
                else:
                    rcells.append("—")
            hcell = "—" if heap is None else f"{heap / 2**20:.1f} MiB"
            print(f"| `{name}` | {n:,} | " + " | ".join(cells) + f" | {hcell} | "
                  + " | ".join(rcells) + " |")
        print("| **geometric mean** | | " + " | ".join("" for _ in names)
              + " | | " + " | ".join(f"**{geomean(ratios[x]):.2f}x**"
                                     for x in others) + " |")
        cold = [geomean([per[x] / per["codemode run"] for _, _, per, _ in rows
                         if x in per and per.get("codemode run")])
                for x in others]
        print(f"\n`codemode run` (a fresh process per program) against the "
              "same peers, geometric means: " + ", ".join(
                  f"{g:.2f}x {x}" for g, x in zip(cold, others)))

if __name__ == "__main__":
    main()
