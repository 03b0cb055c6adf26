#!/usr/bin/env bash
# End-to-end check of code mode over a REST API described by OpenAPI:
# installs the Prism mock server (@stoplight/prism-cli) and GitHub's
# published REST description (@octokit/openapi) from npm into a temporary
# folder, serves the description with Prism (request validation is on: a
# request that does not match the description is answered with a 4xx,
# which fails the call and the program), imports it with an [[openapi]]
# table and runs examples/openapi/github.star, which calls 26 operations of
# different shapes, and nudge.star, the README's program, plus a search
# and a describe; then checks Prism's log:
# every request passed validation. (Prism's own generated answers break
# some `format`s of the description; it logs those as response violations,
# which say nothing about our requests.) Needs cargo and npm; CI does not
# run it. Nothing fetched is kept.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
port="${PRISM_PORT:-4010}"
prism_pid=""
cleanup() {
  if [ -n "$prism_pid" ]; then kill "$prism_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building codemode"
cargo build --quiet --manifest-path "$root/Cargo.toml" -p codemode-server --bin codemode
codemode="${CARGO_TARGET_DIR:-$root/target}/debug/codemode"

echo "== installing Prism and GitHub's OpenAPI description into $work"
npm install --silent --no-audit --no-fund --prefix "$work" @stoplight/prism-cli @octokit/openapi >/dev/null
npm ls --prefix "$work" --depth 0 2>/dev/null | sed -n 's/.*── //p'
spec="$work/node_modules/@octokit/openapi/generated/api.github.com.json"

echo "== serving it with Prism on 127.0.0.1:$port (answers generated from the schemas)"
"$work/node_modules/.bin/prism" mock --dynamic --host 127.0.0.1 --port "$port" "$spec" \
  >"$work/prism.log" 2>&1 &
prism_pid=$!
for _ in $(seq 1 240); do
  if grep -q "Prism is listening" "$work/prism.log"; then break; fi
  if ! kill -0 "$prism_pid" 2>/dev/null; then cat "$work/prism.log"; exit 1; fi
  sleep 0.5
done
grep -q "Prism is listening" "$work/prism.log" || { echo "Prism did not start"; exit 1; }

cat >"$work/codemode.toml" <<TOML
catalogs = []

[limits]
max_time_ms = 60000

[[openapi]]
name = "github"
spec = "$spec"
base_url = "http://127.0.0.1:$port"
headers = { Authorization = "Bearer \${GITHUB_TOKEN}", X-GitHub-Api-Version = "2022-11-28" }
TOML
export GITHUB_TOKEN="e2e-token-not-a-secret"

echo "== search: create a pull request"
"$codemode" search --config "$work/codemode.toml" "create a pull request"
echo "== describe: github.issues.create"
"$codemode" describe --config "$work/codemode.toml" github.issues.create
echo "== run: examples/openapi/github.star"
"$codemode" run --config "$work/codemode.toml" "$here/github.star"
echo "== run: examples/openapi/nudge.star (the README's program)"
"$codemode" run --config "$work/codemode.toml" "$here/nudge.star"
echo "== Prism's view of the requests"
received=$(grep -c "Request received" "$work/prism.log" || true)
passed=$(grep -c "The request passed the validation rules" "$work/prism.log" || true)
refused=$(grep -cE "Violation: request|Request terminated with error" "$work/prism.log" || true)
echo "received: $received; passed validation: $passed; refused or failed: $refused"
if [ "$received" -lt 26 ] || [ "$passed" != "$received" ] || [ "$refused" != "0" ]; then
  grep -E "Violation: request|Request terminated with error" "$work/prism.log" | head -20
  exit 1
fi
echo "== ok"
