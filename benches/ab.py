#!/usr/bin/env python3
"""Two codemode binaries side by side on the programs of `compare.py`.

    python3 benches/ab.py OLD_BIN NEW_BIN [--repeat 5] [PROGRAM ...]

For each program (default: the agent suite, then the loops, at the sizes
`compare.py` uses), each binary runs `codemode run` on the program with N
and with a small N0 (10 for the agent programs, 1 for the loops), the two
binaries alternating round by round; the time of each is the best of the
rounds (CPU time of the process, from `wait4`), and the figure is
`(t(N) - t(N0)) / (N - N0)`, as in `compare.py`. Also the largest peak RSS
of each binary's N runs. Prints each program's ratio (OLD over NEW: above
1 the new binary is faster) and their geometric mean. For changes to the
interpreter or the collector, where `compare.py` (which times the peers
too) would take five times as long.
"""
import argparse
import math
import os
import pathlib
import re
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compare  # noqa: E402  (the suites and their sizes)


def run(binary, path):
    """CPU seconds and peak RSS (KiB) of one `codemode run`."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(binary, [binary, "run", "--max-steps", str(10**15),
                          "--max-time-ms", "600000",
                          "--max-heap-bytes", str(8 << 30),
                          "--max-value-bytes", str(1 << 30), str(path)])
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        raise SystemExit(f"{binary} failed on {path}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("programs", nargs="*")
    args = ap.parse_intermixed_args()
    sizes = {}
    for suite in ("agent", "loops"):
        _, programs, n0 = compare.SUITES[suite]
        for name, n in programs:
            sizes[name] = (n, n0)
    names = args.programs or list(sizes)
    bins = [args.old, args.new]
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if name not in sizes:
                raise SystemExit(f"no program named {name}")
            n, n0 = sizes[name]
            paths = []
            for size in (n0, n):
                p = pathlib.Path(tmp) / f"{name}-{size}.star"
                p.write_text(compare.source(name, size))
                paths.append(p)
            best = [[math.inf, math.inf] for _ in bins]
            rss = [0 for _ in bins]
            for _ in range(args.repeat):
                for j, b in enumerate(bins):
                    for i, p in enumerate(paths):
                        t, m = run(b, p)
                        best[j][i] = min(best[j][i], t)
                        if i == 1:
                            rss[j] = max(rss[j], m)
            per = [(t - t0) / (n - n0) * 1e9 for t0, t in best]
            ratios.append(per[0] / per[1])
            print(f"{name:20s} old {per[0]:8.1f} ns  new {per[1]:8.1f} ns  "
                  f"old/new {per[0] / per[1]:5.2f}   peak RSS old "
                  f"{rss[0] / 1024:6.1f} new {rss[1] / 1024:6.1f} MiB",
                  flush=True)
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"geometric mean old/new: {g:.3f} (above 1 the new binary is faster)")


if __name__ == "__main__":
    main()
