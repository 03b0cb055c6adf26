#!/usr/bin/env bash
# Capacity of one replica for I/O-bound programs: `codemode serve --http`
# with the shipped defaults (no tokens) in front of a loopback JSON API
# that answers every call after DELAY_MS (the `slow_api` example of the
# server crate, imported with [[openapi]]); wrk runs a program of four sequential calls
# (`capacity` of benches/http/execute.lua) at each concurrency. The ideal is
# c / (4 x DELAY) executes per second. For each concurrency it prints
# executes/s against the ideal, p50/p99, failures, and the server's peak
# open/paused executions, heap, threads and RSS (sampled from /metrics and
# /proc every 200 ms), the slowest answer of /healthz (asked at each
# sample), and the memory per open execution beyond its heap:
# (peak RSS - RSS before the level - peak heap) / peak open executions.
#
# With CAPACITY_LOCAL=1 the program calls the in-process
# `conformance.sleep(ms=DELAY_MS)` instead of the API, which shows what an
# outbound HTTP request in flight adds to a paused execution. With
# CAPACITY_HTTP2=1 the import sets `http = "2"`: the calls in
# flight share one HTTP/2 connection (h2c on the loopback, as an https
# API that offers HTTP/2 by ALPN), instead of one HTTP/1.1 connection each.
#
# Usage: benches/capacity/run.sh [SECONDS] [DELAY_MS] [CONCURRENCY...]
#   (defaults: 15 s, 250 ms, 256 1000; needs wrk: apt-get install wrk;
#   honors CARGO_TARGET_DIR and CODEMODE_BIN)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-15}
delay=${2:-250}
shift $(( $# > 2 ? 2 : $# )) || true
levels=("$@")
[[ ${#levels[@]} -gt 0 ]] || levels=(256 1000)
port=18090
api_port=18091
if [[ -z "${CODEMODE_BIN:-}" ]]; then
  cargo build --release -q -p codemode-server
  CODEMODE_BIN="${CARGO_TARGET_DIR:-target}/release/codemode"
fi
cargo build --release -q -p codemode-server --example slow_api
dir=$(mktemp -d)
trap 'kill $server $api 2>/dev/null || true; rm -rf "$dir"' EXIT
"${CARGO_TARGET_DIR:-target}/release/examples/slow_api" "$api_port" "$delay" &
api=$!
for _ in $(seq 50); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$api_port") 2>/dev/null; then break; fi
  sleep 0.1
done
program=(capacity)
http2=
[[ -n "${CAPACITY_HTTP2:-}" ]] && http2='http = "2"'
catalogs='[]'
if [[ -n "${CAPACITY_LOCAL:-}" ]]; then
  program=(capacity_local "$delay")
  catalogs='["conformance"]'
fi
cat >"$dir/codemode.toml" <<TOML
catalogs = $catalogs

[telemetry]
metrics = true

[[openapi]]
name = "api"
spec = "http://127.0.0.1:$api_port/openapi.json"
base_url = "http://127.0.0.1:$api_port"
$http2
TOML
"$CODEMODE_BIN" serve --config "$dir/codemode.toml" --http "127.0.0.1:$port" 2>"$dir/server.log" &
server=$!
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done
url="http://127.0.0.1:$port/mcp"
rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
threads() { awk '/^Threads/ {print $2}' "/proc/$server/status"; }
gauge() { curl -s "http://127.0.0.1:$port/metrics" | awk -v n="codemode_executions_$1" '$1 == n {print $2}'; }
wrk -t1 -c16 -d2s -s benches/http/execute.lua "$url" -- "${program[@]}" >/dev/null # warm-up
echo "idle: RSS $(rss) KiB, threads $(threads)"
for c in "${levels[@]}"; do
  idle_rss=$(rss)
  (
    peak_open=0 peak_paused=0 peak_heap=0 peak_threads=0 peak_rss=0 worst_health=0 probes=0
    end=$((SECONDS + seconds))
    sleep 2
    while (( SECONDS < end - 1 )); do
      open=$(gauge open); paused=$(gauge paused); heap=$(gauge heap_bytes)
      r=$(rss); t=$(threads)
      (( open > peak_open )) && peak_open=$open
      (( paused > peak_paused )) && peak_paused=$paused
      (( heap > peak_heap )) && peak_heap=$heap
      (( t > peak_threads )) && peak_threads=$t
      (( r > peak_rss )) && peak_rss=$r
      # A probe that fails or takes over a second counts as 1,000,000 µs.
      health=$(curl -s -o /dev/null -m 1 -w '%{http_code} %{time_total}' "http://127.0.0.1:$port/healthz" |
        awk '$1 == 200 { printf "%.0f", $2 * 1e6; next } { print 1000000 }')
      probes=$((probes + 1))
      (( health > worst_health )) && worst_health=$health
      sleep 0.2
    done
    per=$(awk -v r="$peak_rss" -v i="$idle_rss" -v h="$peak_heap" -v o="$peak_open" \
      'BEGIN { if (o > 0) printf "%.1f", ((r - i) * 1024 - h) / o / 1024; else print "-" }')
    echo "  peak open $peak_open, paused $peak_paused, heap $((peak_heap / 1024)) KiB, threads $peak_threads, RSS $peak_rss KiB (idle $idle_rss); beyond the heap: $per KiB per open execution"
    echo "  /healthz: slowest of $probes answers $(awk -v u="$worst_health" 'BEGIN { printf "%.1f", u / 1000 }') ms"
  ) > "$dir/sample" &
  sampler=$!
  summary=$(wrk -t1 -c"$c" -d"${seconds}s" --timeout 10s -s benches/http/execute.lua "$url" -- "${program[@]}" | tail -1)
  wait $sampler
  ideal=$(awk -v c="$c" -v d="$delay" 'BEGIN { printf "%.0f", c / (4 * d / 1000) }')
  echo "c=$c: $summary (ideal $ideal executes/s)"
  cat "$dir/sample"
done
