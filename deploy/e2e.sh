#!/usr/bin/env bash
# End to end: three `codemode serve --http` replicas behind a proxy, load
# from wrk, and a rolling restart under load — SIGTERM one replica at a
# time, wait for it to drain and exit, start its replacement, wait until it
# is ready — asserting that no request fails. Prints calls/s, p50 and p99
# before, during and after the restart. Two proxies, one after the other:
#
# - HAProxy with active health checks of /readyz every 100 ms: a draining
#   replica answers 503 there and is taken out during its drain delay.
# - nginx without any health check (what open-source nginx has): it keeps
#   sending to a draining replica until the replica stops accepting, then
#   its connect is refused and nginx passes the request to the next
#   replica. What keeps that lossless is the server's drain: during the
#   drain delay every response carries `Connection: close` (so nginx
#   does not keep a connection the replica will close), and when it stops
#   accepting it still serves every connection that has begun a request.
#   A request that reaches a replica in its last moment (new SYNs are
#   dropped there for about 50 ms) waits for proxy_connect_timeout (1 s
#   here) before nginx passes it on: that is the p99 during the restart.
#   `proxy_next_upstream` keeps nginx's default (`error timeout`, without
#   `non_idempotent`): a POST `execute` may have side effects, so it must
#   not be sent twice; nginx passes it on only when it has not been sent
#   (a refused or failed connect), never after a replica may have run it.
#
# Also prints each replica's peak resident memory after each run.
#
# HAProxy, nginx and wrk come from Debian packages unpacked into a
# temporary folder (apt-get download + dpkg -x; nothing is installed on the
# system or left in the repository); so do the libraries they need that the
# system lacks. Not part of `cargo test`.
#
# Usage: deploy/e2e.sh [SECONDS_PER_PHASE] [haproxy|nginx]...
#   (both proxies by default; honors CARGO_TARGET_DIR; CODEMODE_BIN=path
#   skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=10
proxies=()
for arg in "$@"; do
  case "$arg" in
    haproxy | nginx) proxies+=("$arg") ;;
    *[!0-9]* | '') echo "usage: deploy/e2e.sh [SECONDS_PER_PHASE] [haproxy|nginx]..." >&2; exit 2 ;;
    *) seconds=$arg ;;
  esac
done
[[ ${#proxies[@]} -gt 0 ]] || proxies=(haproxy nginx)
work=$(mktemp -d)
pids=()
proxy_pid=
cleanup() {
  for pid in "${pids[@]}" $proxy_pid; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# --- tools, in the temporary folder -------------------------------------
tools=(wrk haproxy nginx)
# Their libraries beyond libc6, libcrypt1, zlib1g and libssl3 (the
# system's); those the system has already are used from there.
libraries=(libluajit-5.1-2 libluajit-5.1-common liblua5.3-0
  libopentracing-c-wrapper0 libopentracing1 libpcre2-8-0)
packages=("${tools[@]}")
for lib in "${libraries[@]}"; do
  dpkg-query -W -f='${Status}' "$lib" 2>/dev/null | grep -q "ok installed" ||
    packages+=("$lib")
done
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
tools_env=(env "LD_LIBRARY_PATH=$work/root/usr/lib/x86_64-linux-gnu:$work/root/lib/x86_64-linux-gnu")
wrk=("${tools_env[@]}" "$work/root/usr/bin/wrk")
haproxy=("${tools_env[@]}" "$work/root/usr/sbin/haproxy")
nginx=("${tools_env[@]}" "$work/root/usr/sbin/nginx")

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
# while it still serves; behind nginx, a second of responses that close
# their connections.
drain_delay_ms = 1000
# Longer than the proxies' idle timeout for their connections to a
# replica (HAProxy's pool and nginx's keepalive_timeout, 30 s below): the
# proxy closes an idle connection before the replica would, so it never
# sends a request on one the replica is closing.
keep_alive_timeout_ms = 60000
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

# --- the proxies ----------------------------------------------------------
start_haproxy() {
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
  proxy_pid=$!
}

start_nginx() {
  mkdir -p "$work/nginx"
  cat >"$work/nginx.conf" <<CONF
user $(id -un);
worker_processes 2;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    keepalive_requests 1000000;
    upstream replicas {
        # No health check: a replica is known down only when its connect
        # fails. max_fails=0 keeps trying it (a refused connect costs
        # little, and nginx passes the request on): with the default
        # (1 failure takes it out for 10 s) a rolling restart faster than
        # 10 s per replica leaves every replica marked failed at once and
        # nginx answers 502 "no live upstreams".
        server 127.0.0.1:${ports[0]} max_fails=0;
        server 127.0.0.1:${ports[1]} max_fails=0;
        server 127.0.0.1:${ports[2]} max_fails=0;
        # Idle connections kept to the replicas, per worker; closed by
        # nginx after 30 s idle, before the replicas' keep_alive_timeout.
        keepalive 64;
        keepalive_timeout 30s;
    }
    server {
        listen 127.0.0.1:$front;
        location / {
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_connect_timeout 1s;
            proxy_read_timeout 30s;
            # nginx's default, spelled out: pass a request to the next
            # replica on a connect error or timeout, and a POST only if it
            # was not sent (no non_idempotent: an execute may have run).
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries 3;
        }
    }
}
CONF
  "${nginx[@]}" -e "$work/nginx/error.log" -p "$work/nginx" -c "$work/nginx.conf" &
  proxy_pid=$!
}

url="http://127.0.0.1:$front/mcp"
load() { # seconds -> one summary line
  "${wrk[@]}" -t1 -c16 -d"$1s" -s benches/http/execute.lua "$url" -- three | tail -1
}

failed_in() { sed -n 's/.*failed \([0-9]*\) of.*/\1/p' <<<"$1"; }

# The rolling restart runs beside the load.
restart() { # proxy
  for i in 0 1 2; do
    local old=${pids[$i]}
    kill -TERM "$old"
    wait "$old" || { echo "replica $i exited with $?" >&2; exit 1; }
    start_replica "$i"
    wait_ready "${ports[$i]}"
    sleep 0.5 # HAProxy's two checks to take it back
  done
}

run() { # proxy -> the number of failed requests in $failed
  local proxy=$1
  for i in 0 1 2; do start_replica "$i"; done
  for port in "${ports[@]}"; do wait_ready "$port"; done
  "start_$proxy"
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$front") 2>/dev/null && break
    sleep 0.05
  done
  sleep 0.5 # every server's first checks
  "${wrk[@]}" -t1 -c4 -d1s -s benches/http/execute.lua "$url" -- three >/dev/null # warm-up
  local before during after
  before=$(load "$seconds")
  echo "$proxy before:  $before"
  local during_file="$work/during"
  ( load "$((seconds + 10))" >"$during_file" ) &
  local loader=$!
  sleep 1
  restart "$proxy"
  wait "$loader"
  during=$(cat "$during_file")
  echo "$proxy during:  $during (rolling restart of 3 replicas)"
  after=$(load "$seconds")
  echo "$proxy after:   $after"
  for i in 0 1 2; do
    echo "$proxy replica $i peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/${pids[$i]}/status")"
  done
  # Stop the proxy, then the replicas (a drain each: exit 0).
  kill "$proxy_pid"
  wait "$proxy_pid" 2>/dev/null || true
  proxy_pid=
  for i in 0 1 2; do kill -TERM "${pids[$i]}"; done
  for i in 0 1 2; do
    wait "${pids[$i]}" || { echo "replica $i exited with $?" >&2; exit 1; }
  done
  pids=()
  if [[ "$proxy" == nginx ]]; then
    # A refused connect, and one that timed out (its SYN fell in the
    # draining replica's last moment), are passed on to the next replica;
    # anything else nginx logged as an error is shown.
    local connects='connect\(\) failed \(111|timed out .* while connecting'
    echo "nginx: $(grep -c 'connect() failed (111' "$work/nginx/error.log") connects refused," \
      "$(grep -c 'timed out .* while connecting' "$work/nginx/error.log") timed out" \
      "(each passed on to another replica)"
    grep '\[error\]' "$work/nginx/error.log" | grep -Ev "$connects" | sed 's/^/  /' || true
    : >"$work/nginx/error.log"
  fi
  local line
  failed=0
  for line in "$before" "$during" "$after"; do
    failed=$((failed + $(failed_in "$line")))
  done
}

status=0
for proxy in "${proxies[@]}"; do
  run "$proxy"
  if [[ "$failed" -ne 0 ]]; then
    echo "$proxy: FAILED: $failed requests failed" >&2
    status=1
  else
    echo "$proxy: ok: no request failed"
  fi
done
exit "$status"
