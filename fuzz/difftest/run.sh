#!/usr/bin/env bash
# run.sh — build the differential fuzzer and run it (see README.md).
#
#   DIFFTEST_PYTHON=/path/to/venv/bin/python fuzz/difftest/run.sh [COUNT [START [-- MORE FLAGS]]]
#
# Runs COUNT programs (default 1,000,000) from seed START (default 0) in
# chunks of 100,000, under `nice`, writing findings and runs.log to
# $DIFFTEST_FINDINGS (default fuzz/difftest/findings). Exits 1 when a chunk
# found a disagreement that is not filtered.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
count="${1:-1000000}"
start="${2:-0}"
shift $(( $# > 2 ? 2 : $# ))
[[ "${1:-}" == "--" ]] && shift
if [[ -z "${DIFFTEST_PYTHON:-}" ]]; then
  echo "run.sh: set DIFFTEST_PYTHON to a Python with the starlark-go binding (see README.md)" >&2
  exit 2
fi
findings="${DIFFTEST_FINDINGS:-$here/findings}"
# DIFFTEST_FEATURES (e.g. `gc-stress,no-fast-path`) builds the interpreter
# in those modes. The build goes to the repository's `target/difftest`
# unless CARGO_TARGET_DIR says otherwise.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$(cd "$here/../.." && pwd)/target/difftest}"
(cd "$here" && cargo build --release --quiet --features "${DIFFTEST_FEATURES:-}")
bin="$CARGO_TARGET_DIR/release/difftest"
chunk=100000
status=0
s="$start"
end=$((start + count))
while (( s < end )); do
  n=$(( end - s < chunk ? end - s : chunk ))
  out="$(nice "$bin" run --start "$s" --count "$n" --findings "$findings" "$@")"
  printf '%s\n' "$out"
  [[ "$(head -1 <<< "$out")" == *" 0 disagreements,"* ]] || status=1
  s=$((s + n))
done
exit "$status"
