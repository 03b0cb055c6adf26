#!/usr/bin/env python3
"""Runs benchmark programs under codemode (the release binary, as a fresh
`codemode run` process and served), CPython, starlark-go (PyPI
`starlark-go`) and starlark-rust (PyPI `starlark-pyo3`) in one run on one
machine, checks that every engine returns the same result, and prints each
engine's time per unit of work and peak memory, the ratios, and their
geometric means.

Two suites: `agent` (benches/programs/agent: data shaping the way agent
programs do it, records in dicts, grouping, joining, sorting, reports,
json, string methods; N is the number of records) is the headline;
`loops` (benches/programs: the interpreter's hot loops; N is the loop
count) is the second table. `--suite all` runs both.

    cargo build --release -p codemode-server
    python3 -m venv ~/.cache/codemode-bench-peers
    ~/.cache/codemode-bench-peers/bin/pip install starlark-go==1.0.1 starlark-pyo3==2026.1.3
    ~/.cache/codemode-bench-peers/bin/python benches/compare.py \\
        --codemode target/release/codemode [--cpython /usr/bin/python3.11] \\
        [--suite agent|loops|all] [--repeat 5]

Time. Every program is `def main(): ...` whose work grows with `N`. Each
engine runs each program with `N` and with a small `N0` (1 for the loops,
10 for the agent programs); each time is the fastest of `--repeat` rounds,
and the figure is `(t(N) - t(N0)) / (N - N0)`. The `N0` run carries
everything that does not grow with `N`: process start, interpreter
start-up, building the demo catalog, importing, parsing, compiling,
setting up a module, printing the result. So every engine is charged for
the work alone. The rounds interleave the engines: in each round, for one
program, `codemode run`, CPython, starlark-go, starlark-rust and
`codemode serve` run one after another (each its `N0` run, then its `N`
run), so that every engine sees the same machine state; then the next
round, then the next program.

- `codemode run`: a fresh process of the binary per run, timed by that
  process's CPU time (user + system, from `wait4`).
- CPython: a fresh process per run of the interpreter named by `--cpython`
  (default /usr/bin/python3.11 when it exists, else `python3` on PATH;
  run by the path it reports as `sys.executable`, so that a launcher
  script such as a pyenv shim is not timed), started with `-I` (no PYTHON* variables, no user site); it reads the
  program, execs it, calls `main()` and prints the result as JSON. Timed
  like `codemode run`. The `.star` file runs as Python source, except the
  json programs, which have a `.py` twin (Starlark's json module is not
  Python's). The output starts with that interpreter's path, `sys.version`
  and whether its `CONFIG_ARGS` name `--enable-optimizations` and
  `--with-lto`, as the interpreter itself reports them. Debian's packages
  build with PGO and LTO in their own rules and keep those flags out of
  sysconfig, so for them the flags' absence says nothing; the note says so
  when the interpreter is such a package (its changelog.Debian is there).
- starlark-go and starlark-rust: the Python bindings, inside this
  harness's process (the venv's Python), timed by this process's CPU time
  around the call; every run in a fresh module.
- `codemode serve`: the product as deployed, one long-lived process (here
  `codemode serve` on stdio) that runs every program as an `execute` call,
  timed by the CPU time of the server's threads during the call (their
  `schedstat`). Fresh memory is expensive on virtual machines (the host,
  then the kernel, must back and zero every page): a server pays for it
  once, as do the in-process bindings; a fresh process pays for the memory
  its work touches on every run.

The ratios of the time table are of `codemode run`: each peer's time over
`codemode run`'s (above 1 codemode is faster), with their geometric means.
The geometric means of `codemode serve` against the peers follow each
table. The starlark-go binding has no json module, so its json cells are
empty and those programs are left out of its geometric means.

Times are CPU time, not wall time: on a shared machine whose load exceeds
its cores, wall time mostly measures how long a process waited for a
core. `--wall` times wall clock instead, for a quiet machine (a child
process from its fork to its reaping, an in-process run around the call,
an `execute` call around the request).

Memory. The memory table gives, for the `N` run of each program, each
engine's peak resident set size (the kernel's high-water mark of the
process's resident pages, `ru_maxrss`) in MiB: the whole process,
interpreter, libraries and all. For `codemode run` and CPython it is that
of the timed `N` runs (the largest over the rounds). starlark-go and
starlark-rust run inside this harness, so each runs the `N` program once
more, in a fresh process of this harness's Python (`-I`) that imports the
binding, runs the program the same way and prints the result (which must
agree too); its peak RSS is theirs. `codemode serve` has none (one process
runs every program). The ratio is `codemode run` over CPython (below 1
codemode uses less); each suite's largest follows its table. The table
also gives the heap bytes codemode's `N` run needs: the smallest
`--max-heap-bytes` under which it still succeeds, found by bisection (to
within 1%).

Child processes are started by a launcher, a small process of this
harness's Python (`-I -S`) started once, which forks, execs and `wait4`s
each and reports its rusage. Linux counts into a process's `ru_maxrss` the
peak RSS of the memory image it replaced at `exec`, so a child started
straight from this harness, which grows by the bindings' runs, would
report the harness's peak instead of its own. A child of the launcher
starts from the pages it copies of the launcher at `fork`: its figure is
the larger of that floor and its own peak. The output gives the floor,
the peak RSS of `/bin/true` launched the same way; a figure at the floor
means at most that much.

codemode runs with budget accounting on (step, heap and time limits set
high enough for the program, but still counted and checked)."""

import argparse
import json
import math
import os
import pathlib
import re
import resource
import shutil
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

RUN, SERVE = "codemode run", "codemode serve"
# The order of the engines in a round and in the tables.
ORDER = [RUN, "CPython", "starlark-go", "starlark-rust", SERVE]
PEERS = ["CPython", "starlark-rust", "starlark-go"]

# The launcher: forks, execs and reaps each child, and reports the child's
# own rusage. Kept small (run with -I -S, importing neither json nor
# site), because a child's ru_maxrss starts from what it copies of its
# parent (see the docstring). A job is a line with the byte length of the
# rest, then the stdout path, the stderr path and the argv, NUL-separated;
# the answer is a line: exit code, CPU seconds, wall seconds, peak RSS in
# KiB.
LAUNCHER = r"""
import os, sys, time
jobs = sys.stdin.buffer
while True:
    head = jobs.readline()
    if not head:
        break
    out_path, err_path, *argv = jobs.read(int(head)).split(b"\0")
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(null, 0)
            os.dup2(out, 1)
            os.dup2(err, 2)
            os.execv(argv[0], argv)
        except OSError as e:
            os.write(2, f"launcher: {argv[0]!r}: {e}\n".encode())
        os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    for fd in (null, out, err):
        os.close(fd)
    sys.stdout.write(f"{os.waitstatus_to_exitcode(status)} "
                     f"{ru.ru_utime + ru.ru_stime!r} {wall!r} {ru.ru_maxrss}\n")
    sys.stdout.flush()
"""

# What CPython runs in its own process: the program at argv[1], then
# main(), its result printed as JSON.
CPYTHON_CHILD = r"""
import json, sys
with open(sys.argv[1]) as f:
    src = f.read()
env = {}
exec(compile(src, sys.argv[1], "exec"), env)
sys.stdout.write(json.dumps(env["main"]()))
"""

# How each binding runs a program: a factory per binding that imports it
# and returns `run(src) -> main()'s result`, every run in a fresh module.
# This harness execs this text for the timed runs, and the RSS child runs
# it (followed by BINDING_CHILD), so both run the program the same way.
BINDINGS = r"""
def starlark_go():
    import starlark_go

    def run(src):
        s = starlark_go.Starlark()
        s.exec(src)
        return s.eval("main()")
    return run


def starlark_rust():
    import starlark as sl
    globals_ = sl.Globals.extended_by([sl.LibraryExtension.Json])

    def run(src):
        m = sl.Module()
        sl.eval(m, sl.parse("main.star", src, sl.Dialect.standard()), globals_)
        call = sl.parse("call.star", "main()", sl.Dialect.standard())
        return sl.eval(m, call, globals_)
    return run
"""

BINDING_CHILD = r"""
import json, sys
with open(sys.argv[2]) as f:
    src = f.read()
run = {"starlark-go": starlark_go, "starlark-rust": starlark_rust}[sys.argv[1]]()
sys.stdout.write(json.dumps(run(src)))
"""

# What the interpreter named by --cpython says about its build.
CPYTHON_INFO = r"""
import json, os, sys, sysconfig
args = sysconfig.get_config_var("CONFIG_ARGS") or ""
v = sys.version_info
changelog = f"/usr/share/doc/python{v.major}.{v.minor}/changelog.Debian.gz"
print(json.dumps({
    "executable": sys.executable,
    "realpath": os.path.realpath(sys.executable),
    "version": sys.version,
    "enable_optimizations": "--enable-optimizations" in args,
    "with_lto": "--with-lto" in args,
    "debian": os.path.realpath(sys.executable).startswith("/usr/bin/")
              and os.path.exists(changelog),
}))
"""


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
    process, all its threads."""
    if wall:
        return time.perf_counter()
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def normalize(v):
    """A result as comparable JSON text."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


class Sample:
    """One run: the program's result, the seconds it took and the peak RSS
    of its process in KiB (None for a run inside a shared process)."""

    def __init__(self, result, seconds, rss_kib=None):
        self.result, self.seconds, self.rss_kib = result, seconds, rss_kib


class Launcher:
    """Runs child processes through the launcher (LAUNCHER above)."""

    def __init__(self, tmp):
        self.out = pathlib.Path(tmp) / "child.out"
        self.err = pathlib.Path(tmp) / "child.err"
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", LAUNCHER],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(self, argv, wall):
        """Runs argv to its end: (exit code, stdout, stderr, seconds,
        peak RSS in KiB). The seconds are the child's CPU time (user +
        system), or with `wall` the wall time from its fork to its reaping."""
        job = b"\0".join(os.fsencode(str(a))
                         for a in [self.out, self.err, *argv])
        self.proc.stdin.write(b"%d\n" % len(job) + job)
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the launcher exited")
        code, cpu, wall_s, rss = line.split()
        return (int(code), self.out.read_text(), self.err.read_text(),
                float(wall_s) if wall else float(cpu), int(rss))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


class CodemodeRun:
    """codemode as a fresh process per run: `codemode run`."""
    name = RUN

    def __init__(self, binary, tmp, launcher, wall):
        self.binary = binary
        self.tmp = pathlib.Path(tmp)
        self.launcher, self.wall = launcher, wall

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
            code, out, err, t, rss = self.launcher.run(cmd, self.wall)
            if code != 0:
                raise RuntimeError(f"codemode run {name}: {err.strip()}")
            return Sample(json.loads(out)["result"], t, rss)
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


class CPython:
    """CPython as a fresh process of the chosen interpreter per run."""
    name = "CPython"

    def __init__(self, interpreter, tmp, launcher, wall):
        self.interpreter = interpreter
        self.tmp = pathlib.Path(tmp)
        self.launcher, self.wall = launcher, wall

    def runner(self, name, n):
        path = self.tmp / f"{name}-{n}.py"
        path.write_text(source(name, n, python=True))
        cmd = [self.interpreter, "-I", "-c", CPYTHON_CHILD, path]

        def run():
            code, out, err, t, rss = self.launcher.run(cmd, self.wall)
            if code != 0:
                raise RuntimeError(f"CPython {name}: {err.strip()}")
            return Sample(json.loads(out), t, rss)
        return run


class CodemodeServe:
    """codemode as deployed: one `codemode serve` process (stdio MCP) that
    runs every program as an `execute` call. Each call is timed by the CPU
    time of the server's threads (their `schedstat`, in nanoseconds), or
    by the wall clock around the call with `--wall`."""
    name = SERVE

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
            return Sample(result["structuredContent"]["result"], t)
        return run

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


class Binding:
    """A Python binding (starlark-go, starlark-rust) run inside this
    process for time, and in a fresh process for its peak RSS."""

    def __init__(self, name, factory, tmp, launcher, wall):
        self.name, self.factory = name, factory
        self.tmp = pathlib.Path(tmp)
        self.launcher, self.wall = launcher, wall
        ns = {}
        exec(BINDINGS, ns)
        self.run_source = ns[factory]()  # raises ImportError without it

    def runner(self, name, n):
        if self.name == "starlark-go" and name.startswith("json"):
            return None  # the binding has no json module
        src = source(name, n)

        def run():
            t0 = clock(self.wall)
            result = self.run_source(src)
            return Sample(result, clock(self.wall) - t0)
        return run

    def rss(self, name, n):
        """One run of the program in a fresh process of this Python that
        imports only the binding: (result, peak RSS in KiB)."""
        path = self.tmp / f"{name}-{n}.star"
        path.write_text(source(name, n))
        code, out, err, _, rss = self.launcher.run(
            [sys.executable, "-I", "-c", BINDINGS + BINDING_CHILD,
             self.name, path], self.wall)
        if code != 0:
            raise RuntimeError(f"{self.name} {name} (RSS run): {err.strip()}")
        return json.loads(out), rss


def cpython_build(interpreter):
    """The interpreter's own path (not a launcher script such as a pyenv
    shim, which would run in every timed run), and the note that says
    which CPython build runs the programs."""
    p = subprocess.run([interpreter, "-I", "-c", CPYTHON_INFO],
                       capture_output=True, text=True, check=True)
    info = json.loads(p.stdout)
    flags = (f"CONFIG_ARGS: --enable-optimizations "
             f"{'yes' if info['enable_optimizations'] else 'no'}, --with-lto "
             f"{'yes' if info['with_lto'] else 'no'}")
    if info["debian"] and not (info["enable_optimizations"]
                               and info["with_lto"]):
        flags += (" (a Debian package: Debian builds it with PGO and LTO in "
                  "its own rules, which CONFIG_ARGS does not record)")
    version = " ".join(info["version"].split())
    path = info["executable"]
    if info["realpath"] != path:
        path += f" (-> {info['realpath']})"
    return info["executable"], f"CPython: {path}, {version}; {flags}"


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def mib(kib):
    return "—" if kib is None else f"{kib / 1024:.1f}"


def measure(name, n, n0, engines, repeat):
    """Runs one program in `repeat` interleaved rounds: the best N and N0
    time of each engine, the largest peak RSS of its N runs, and its
    normalized N results."""
    runs = {}
    for e in engines:
        full = e.runner(name, n)
        if full is not None:
            runs[e.name] = (e.runner(name, n0), full)
    best = {x: [math.inf, math.inf] for x in runs}
    rss, results = {}, {x: set() for x in runs}
    for _ in range(repeat):
        for x, pair in runs.items():
            for i, run in enumerate(pair):
                s = run()
                best[x][i] = min(best[x][i], s.seconds)
                if i == 1:
                    results[x].add(normalize(s.result))
                    if s.rss_kib is not None:
                        rss[x] = max(rss.get(x, 0), s.rss_kib)
    return best, rss, results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--codemode", default=os.environ.get(
        "CODEMODE_BIN", "target/release/codemode"))
    ap.add_argument("--cpython", default="/usr/bin/python3.11"
                    if os.path.exists("/usr/bin/python3.11") else "python3",
                    help="the CPython interpreter to run the programs "
                    "(default: /usr/bin/python3.11 when it exists, "
                    "else python3)")
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

    if shutil.which(args.cpython) is None:
        sys.exit(f"compare.py: no CPython interpreter {args.cpython}")
    interpreter, note = cpython_build(shutil.which(args.cpython))
    binary = os.path.abspath(args.codemode)
    print(note)
    print(f"starlark-go and starlark-rust: in {sys.executable} "
          f"({' '.join(sys.version.split())})", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        launcher = Launcher(tmp)
        run_engine = CodemodeRun(binary, tmp, launcher, args.wall)
        engines = {RUN: run_engine,
                   "CPython": CPython(interpreter, tmp, launcher, args.wall),
                   SERVE: CodemodeServe(binary, args.wall)}
        for name, factory in (("starlark-rust", "starlark_rust"),
                              ("starlark-go", "starlark_go")):
            try:
                engines[name] = Binding(name, factory, tmp, launcher,
                                        args.wall)
            except ImportError as e:
                print(f"note: {name} not available ({e})", file=sys.stderr)
        names = [x for x in ORDER if x in engines]
        peers = [x for x in PEERS if x in engines]
        ordered = [engines[x] for x in names]

        # Start-up of the fresh-process engines for the record (an empty
        # main), and the RSS floor of a launched child.
        empty = pathlib.Path(tmp) / "empty.star"
        empty.write_text("def main():\n    return 0\n")
        starts = {}
        for x, cmd in ((RUN, [binary, "run", empty]),
                       ("CPython", [interpreter, "-I", "-c", CPYTHON_CHILD,
                                    empty]),
                       ("/bin/true", ["/bin/true"])):
            rounds = [launcher.run(cmd, args.wall) for _ in range(args.repeat)]
            if any(r[0] != 0 for r in rounds):
                sys.exit(f"compare.py: {x} failed at start-up: {rounds[0][2]}")
            starts[x] = (min(r[3] for r in rounds), max(r[4] for r in rounds))

        suites = ["agent", "loops"] if args.suite == "all" else [args.suite]
        tables = []
        for suite in suites:
            _, programs, n0 = SUITES[suite]
            rows = []
            for name, n in programs:
                if args.only and name not in args.only:
                    continue
                n = max(n0 + 1, int(n * args.scale))
                best, rss, results = measure(name, n, n0, ordered,
                                             args.repeat)
                for x in names:
                    if isinstance(engines[x], Binding) and x in results:
                        result, rss[x] = engines[x].rss(name, n)
                        results[x].add(normalize(result))
                distinct = set().union(*results.values())
                if len(distinct) != 1:
                    sys.exit(f"{name}: engines disagree: {results}")
                per = {x: max(b[1] - b[0], 0.0) / (n - n0) * 1e9
                       for x, b in best.items()}
                heap = None if args.no_heap else run_engine.heap_needed(name, n)
                rows.append((name, n, per, rss, heap))
                print(f"{suite}/{name:18} N={n:<9} " + "  ".join(
                    f"{x} {per[x]:.1f}" for x in names if x in per)
                    + " ns/unit; peak RSS " + "  ".join(
                    f"{x} {mib(rss[x])}" for x in names if x in rss)
                    + " MiB", file=sys.stderr)
            tables.append((suite, rows))
        engines[SERVE].close()
        launcher.close()

    load = os.getloadavg()
    what = "wall time" if args.wall else "CPU time"
    print(f"\n{what}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}. "
          "Start-up (an empty main, best time, largest peak RSS; subtracted "
          "with the N0 run): " + "; ".join(
              f"{x} {t * 1e3:.1f} ms, {mib(k)} MiB"
              for x, (t, k) in starts.items() if x != "/bin/true")
          + f". Peak RSS floor of a launched child (/bin/true): "
          f"{mib(starts['/bin/true'][1])} MiB.")
    for suite, rows in tables:
        unit = "record" if suite == "agent" else "iteration"
        print(f"\n**{suite}: time** (ns per {unit}; ratio = the peer's time "
              f"over `{RUN}`'s, above 1 codemode is faster)\n")
        print("| program | N | " + " | ".join(names) + " | "
              + " | ".join(f"vs {x}" for x in peers) + " |")
        print("|---|---:|" + "---:|" * (len(names) + len(peers)))
        ratios = {x: [] for x in peers}
        for name, n, per, _, _ in rows:
            cells = [f"{per[x]:.1f}" if x in per else "—" for x in names]
            rcells = []
            for x in peers:
                if x in per and per.get(RUN):
                    r = per[x] / per[RUN]
                    ratios[x].append(r)
                    rcells.append(f"{r:.2f}x")
                else:
                    rcells.append("—")
            print(f"| `{name}` | {n:,} | " + " | ".join(cells) + " | "
                  + " | ".join(rcells) + " |")
        print("| **geometric mean** | | " + " | ".join("" for _ in names)
              + " | " + " | ".join(f"**{geomean(ratios[x]):.2f}x**"
                                   for x in peers) + " |")
        print(f"\n`{RUN}` against the peers, geometric means: " + ", ".join(
            f"{geomean(ratios[x]):.2f}x {x}" for x in peers) + ".")
        if SERVE in names:
            served = [geomean([per[x] / per[SERVE] for _, _, per, _, _ in rows
                               if x in per and per.get(SERVE)])
                      for x in peers]
            print(f"`{SERVE}` (one long-lived process) against the same "
                  "peers, geometric means: " + ", ".join(
                      f"{g:.2f}x {x}" for g, x in zip(served, peers)) + ".")

        mem = [x for x in names if x != SERVE]
        print(f"\n**{suite}: peak RSS** (MiB, of the N run's process; "
              f"ratio = `{RUN}` over CPython, below 1 codemode uses less)\n")
        print("| program | N | " + " | ".join(mem)
              + f" | {RUN} / CPython | codemode heap |")
        print("|---|---:|" + "---:|" * (len(mem) + 2))
        worst = None
        for name, n, _, rss, heap in rows:
            cells = [mib(rss.get(x)) for x in mem]
            if rss.get(RUN) and rss.get("CPython"):
                r = rss[RUN] / rss["CPython"]
                worst = max(worst or (r, name), (r, name))
                rcell = f"{r:.2f}x"
            else:
                rcell = "—"
            hcell = "—" if heap is None else f"{heap / 2**20:.1f} MiB"
            print(f"| `{name}` | {n:,} | " + " | ".join(cells)
                  + f" | {rcell} | {hcell} |")
        if worst:
            print(f"\nLargest `{RUN}` / CPython peak RSS in {suite}: "
                  f"{worst[0]:.2f}x (`{worst[1]}`).")


if __name__ == "__main__":
    main()
