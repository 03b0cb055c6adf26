#!/usr/bin/env bash
# HTTP throughput of `codemode serve --http` over loopback with wrk:
# stateless `tools/call execute` of a small program (benches/http/execute.lua)
# at concurrency 1 and 16. Prints calls/s, p50 and p99 latency, the failed
# count, the server's CPU time per call and the load average.
#
# Usage: benches/http/run.sh [SECONDS] [PORT]   (needs wrk: apt-get install wrk;
# honors CARGO_TARGET_DIR)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
port=${2:-18080}
url="http://127.0.0.1:$port/mcp"
cargo build --release -q -p codemode-server
"${CARGO_TARGET_DIR:-target}/release/codemode" serve --http "127.0.0.1:$port" --catalog demo 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done
cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; }
ticks=$(getconf CLK_TCK)
wrk -t1 -c4 -d2s -s benches/http/execute.lua "$url" >/dev/null # warm-up
for spec in "1 1" "2 16"; do
  set -- $spec
  before=$(cpu)
  summary=$(wrk -t"$1" -c"$2" -d"${seconds}s" -s benches/http/execute.lua "$url" | tail -1)
  after=$(cpu)
  calls=$(sed -n 's/.* of \([0-9]*\)$/\1/p' <<<"$summary")
  per_call=$(awk -v t=$((after - before)) -v n="$calls" -v hz="$ticks" 'BEGIN { printf "%.0f", t / hz * 1e6 / n }')
  echo "concurrency $2: $summary; server CPU ${per_call} us/call; load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
