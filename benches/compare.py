#!/usr/bin/env python3
"""Times the hot-loop programs of benches/programs under CPython and under
starlark-go (the PyPI binding `starlark-go`), per loop iteration, so their
figures can be set beside `cargo bench --bench vm` from the same session.

    python3 benches/compare.py [--n N] [--repeat R]

Run it with an interpreter that has `starlark_go` installed (for example the
virtualenv that shared/tools/starlark-ref creates); without it only CPython
is timed. Each figure is the best of R runs of the whole program (parse
included, which is negligible at N = 100,000)."""

import argparse
import pathlib
import time

PROGRAMS = ["loop_arith", "calls", "closures", "list_append",
            "list_comprehension", "dict_set_get"]
# Builtin-library programs, timed per element at a smaller N; json ones
# run a `.py` twin under CPython (Starlark's json is not Python's).
BUILTIN_PROGRAMS = ["methods", "sorted_key", "percent_format",
                    "json_encode", "json_decode"]


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--builtins-n", type=int, default=10_000)
    args = ap.parse_args()
    here = pathlib.Path(__file__).parent / "programs"
    try:
        import starlark_go
    except ImportError:
        starlark_go = None
    print(f"{'program':22} {'CPython ns/iter':>16} {'starlark-go ns/iter':>20}")
    runs = [(name, args.n) for name in PROGRAMS] + [
        (name, args.builtins_n) for name in BUILTIN_PROGRAMS]
    for name, n in runs:
        star = (here / f"{name}.star").read_text().replace(
            "range(N)", f"range({n})")
        twin = here / f"{name}.py"
        py_src = (twin.read_text() if twin.exists() else
                  (here / f"{name}.star").read_text()).replace(
            "range(N)", f"range({n})")

        def run_py():
            env = {}
            exec(compile(py_src, name, "exec"), env)
            env["main"]()

        py = best(run_py, args.repeat) / n * 1e9
        sg = float("nan")
        # The starlark-go binding has no json module.
        if starlark_go is not None and "json" not in name:
            def run_sg():
                s = starlark_go.Starlark()
                s.exec(star)
                s.eval("main()")
            sg = best(run_sg, args.repeat) / n * 1e9
        print(f"{name:22} {py:16.1f} {sg:20.1f}")


if __name__ == "__main__":
    main()
