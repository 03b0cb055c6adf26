#!/usr/bin/env bash
# ci.sh — the differential fuzzer as a step of the test suite (see README.md).
#
#   fuzz/difftest/ci.sh
#
# Installs the reference (`starlark-go==1.0.1` from PyPI) into a temporary
# venv made with the machine's `python3`, builds the fuzzer (release, target
# directory `target/difftest` of the repository), runs its own tests, then
# runs fixed seed ranges through run.sh:
#
#   default build     seeds S..S+20,000            default flags
#   default build     seeds S+1,000,000..+5,000    --unicode 5 --errors 5
#   gc-stress,no-fast-path build  seeds S..S+5,000  default flags
#
# with S = $DIFFTEST_CI_START (default 0). Exits 1 when a run found a
# disagreement that is not filtered, after printing each filed program, its
# report and its minimized form. The venv and the findings are removed at
# the end.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
start="${DIFFTEST_CI_START:-0}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/difftest-ci.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --no-input starlark-go==1.0.1
export DIFFTEST_PYTHON="$tmp/venv/bin/python"
export CARGO_TARGET_DIR="$repo/target/difftest"
# The crate's lock file is not committed (and `cargo fmt` may have made
# one): start from the workspace's, so that the fuzzer builds the
# dependency versions the workspace is tested with.
cp "$repo/Cargo.lock" "$here/Cargo.lock"

echo "difftest ci: build and the tool's own tests (at ${SECONDS} s)"
(cd "$here" && cargo test --release --quiet)

status=0
# run NAME FEATURES COUNT START [FLAGS...]: run.sh with its findings in $tmp.
run() {
  local name="$1" features="$2" count="$3" from="$4"
  shift 4
  echo "difftest ci: $name (at ${SECONDS} s)"
  DIFFTEST_FEATURES="$features" DIFFTEST_FINDINGS="$tmp/findings-$name" \
    "$here/run.sh" "$count" "$from" -- "$@" || status=1
}
run default "" 20000 "$start"
run unicode-errors "" 5000 $((start + 1000000)) --unicode 5 --errors 5
run gc-stress-no-fast-path gc-stress,no-fast-path 5000 "$start"

if (( status != 0 )); then
  shopt -s nullglob
  # Every filed finding outside the filtered classes, in full.
  for dir in "$tmp"/findings-*/*/; do
    class="$(basename "$dir")"
    [[ "$class" == filtered-* ]] && continue
    for report in "$dir"seed*.txt; do
      base="${report%.txt}"
      echo "=== $(basename "$(dirname "$dir")") / $class / $(basename "$base")"
      cat "$report"
      echo "--- program"
      cat "$base.star"
      if [[ -f "$base.min.star" ]]; then
        echo "--- minimized"
        cat "$base.min.star"
      fi
    done
  done
  echo "difftest ci: disagreements with starlark-go (above); reproduce with" \
    "fuzz/difftest/run.sh or 'difftest check FILE.star' (fuzz/difftest/README.md)" >&2
fi
echo "difftest ci: done in ${SECONDS} s"
exit "$status"
