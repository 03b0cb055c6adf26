#!/usr/bin/env bash
# End to end: three `codemode serve --http` replicas behind HAProxy, load
# from wrk, and a rolling restart under load — SIGTERM one replica at a
# time, wait for it to drain and exit, start its replacement, wait until
# HAProxy sees it ready — asserting that no request fails. Prints calls/s,
# p50 and p99 before, during and after the restart.
#
# Also prints each replica's peak resident memory after the run.
#
# HAProxy and wrk come from Debian packages unpacked into a temporary
# folder (apt-get download + dpkg -x; nothing is installed on the system
# or left in the repository). Not part of `cargo test`.
#
# Usage: deploy/e2e.sh [SECONDS_PER_PHASE]   (honors CARGO_TARGET_DIR;
# CODEMODE_BIN=path skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# --- tools, in the temporary folder -------------------------------------
packages=(wrk haproxy libluajit-5.1-2 libluajit-5.1-common liblua5.3-0
  libopentracing-c-wrapper0 libopentracing1)
(
  cd "$work"
  if ! apt-get download -q "${packages[@]}" >apt.log 2>&1; then
    echo "e2e: apt-get download ${packages[*]} failed:" >&2
    cat apt.log >&2
    echo "e2e: the packages come from the system's apt sources (run" \
      "apt-get update first; Debian or Ubuntu on x86_64)" >&2
    exit 1
  fi
  for deb in ./*.deb; do
    dpkg -x "$deb" root || { echo "e2e: dpkg -x $deb failed" >&2; exit 1; }
  done
)
tools_env=(env "LD_LIBRARY_PATH=$work/root/usr/lib/x86_64-linux-gnu")
wrk=("${tools_env[@]}" "$work/root/usr/bin/wrk")
haproxy=("${tools_env[@]}" "$work/root/usr/sbin/haproxy")

# --- the binary -----------------------------------------------------------
if [[ -z "${CODEMODE_BIN:-}" ]]; then
  cargo build --release -q -p codemode-server
  CODEMODE_BIN="${CARGO_TARGET_DIR:-target}/release/codemode"
fi

# --- three replicas -----------------------------------------------------
front=18480
ports=(18481 18482 18483)
cat >"$work/codemode.toml" <<TOML
catalogs = ["demo"]
[http]
# Time for HAProxy's checks (every 100 ms) to take a draining replica out
# while it still serves.
drain_delay_ms = 1000
TOML

start_replica() { # index
  "$CODEMODE_BIN" serve --http "127.0.0.1:${ports[$1]}" --config "$work/codemode.toml" \
    2>>"$work/replica-$1.log" &
  pids[$1]=$!
}

ready() { # port -> 0 when /readyz answers 200
  local reply
  reply=$(exec 2>/dev/null 3<>"/dev/tcp/127.0.0.1/$1" &&
    printf 'GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3 &&
    head -1 <&3) || return 1
  [[ "$reply" == "HTTP/1.1 200"* ]]
}

wait_ready() { # port
  for _ in $(seq 100); do ready "$1" && return 0; sleep 0.05; done
  echo "replica on port $1 never became ready" >&2
  return 1
}

for i in 0 1 2; do start_replica "$i"; done
for port in "${ports[@]}"; do wait_ready "$port"; done

# --- HAProxy --------------------------------------------------------------
cat >"$work/haproxy.cfg" <<CFG
global
    maxconn 4096
defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 10s
    option http-buffer-request
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response response-timeout
frontend mcp
    bind 127.0.0.1:$front
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 100ms fall 1 rise 2
    server r0 127.0.0.1:${ports[0]} check
    server r1 127.0.0.1:${ports[1]} check
    server r2 127.0.0.1:${ports[2]} check
CFG
"${haproxy[@]}" -q -f "$work/haproxy.cfg" &
pids[3]=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$front") 2>/dev/null && break
  sleep 0.05
done
sleep 0.5 # every server's first checks

url="http://127.0.0.1:$front/mcp"
load() { # seconds -> one summary line
  "${wrk[@]}" -t1 -c16 -d"$1s" -s benches/http/execute.lua "$url" -- three | tail -1
}

failed_in() { sed -n 's/.*failed \([0-9]*\) of.*/\1/p' <<<"$1"; }

"${wrk[@]}" -t1 -c4 -d1s -s benches/http/execute.lua "$url" -- three >/dev/null # warm-up
before=$(load "$seconds")
echo "before:  $before"

# The rolling restart runs beside the load.
restart() {
  for i in 0 1 2; do
    local old=${pids[$i]}
    kill -TERM "$old"
    wait "$old" || { echo "replica $i exited with $?" >&2; exit 1; }
    start_replica "$i"
    wait_ready "${ports[$i]}"
    sleep 0.5 # HAProxy's two checks to take it back
  done
}
during_file="$work/during"
( load "$((seconds + 10))" >"$during_file" ) &
loader=$!
sleep 1
restart
wait "$loader"
during=$(cat "$during_file")
echo "during:  $during (rolling restart of 3 replicas)"
after=$(load "$seconds")
echo "after:   $after"
for i in 0 1 2; do
  echo "replica $i peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/${pids[$i]}/status")"
done

total=0
for line in "$before" "$during" "$after"; do
  total=$((total + $(failed_in "$line")))
done
if [[ "$total" -ne 0 ]]; then
  echo "FAILED: $total requests failed" >&2
  exit 1
fi
echo "ok: no request failed"
