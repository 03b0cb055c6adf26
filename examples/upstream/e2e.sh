#!/usr/bin/env bash
# End-to-end check of code mode over real MCP servers from the registries:
# installs @modelcontextprotocol/server-filesystem (npm) and
# mcp-server-git and mcp-server-time (PyPI) into a temporary folder, makes
# a small git repository of notes there, and runs examples/upstream/
# report.star through `codemode run --upstream ...`, which lists the
# directory, reads every file, reads the git history and aggregates. It
# also shows search and describe over the imported tools. Needs cargo,
# npm and python3 with venv; CI does not run it.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== building codemode"
cargo build --quiet --manifest-path "$root/Cargo.toml" -p codemode-server --bin codemode
codemode="${CARGO_TARGET_DIR:-$root/target}/debug/codemode"

echo "== installing the upstream servers into $work"
npm install --silent --no-audit --no-fund --prefix "$work/npm" @modelcontextprotocol/server-filesystem >/dev/null
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check mcp-server-git mcp-server-time
echo "server-filesystem $(npm ls --prefix "$work/npm" --depth 0 2>/dev/null | sed -n 's/.*server-filesystem@//p')"
"$work/venv/bin/pip" list --disable-pip-version-check 2>/dev/null | grep -E '^mcp-server-(git|time) '

echo "== a directory of notes under git"
notes="$work/notes"
mkdir -p "$notes/archive"
printf 'Ship the upstream import.\nThen write the docs.\n' > "$notes/todo.md"
printf 'codemode composes many tool calls in one program\n' > "$notes/idea.txt"
printf '# Meeting\n\nDecided: one program per task.\nNext: measure.\n' > "$notes/meeting.md"
printf 'old\n' > "$notes/archive/2025.txt"
git -C "$notes" init --quiet
git -C "$notes" add todo.md
git -C "$notes" -c user.name=e2e -c user.email=e2e@example.com commit --quiet -m "Add the todo list"
git -C "$notes" add .
git -C "$notes" -c user.name=e2e -c user.email=e2e@example.com commit --quiet -m "Add the meeting notes and an idea"

upstreams=(
  --upstream "fs=$work/npm/node_modules/.bin/mcp-server-filesystem $notes"
  --upstream "git=$work/venv/bin/mcp-server-git"
  --upstream "time=$work/venv/bin/mcp-server-time --local-timezone UTC"
)

echo "== search: read file contents"
"$codemode" search "${upstreams[@]}" "read file contents"
echo "== describe: time.get_current_time"
"$codemode" describe "${upstreams[@]}" time.get_current_time
echo "== run: examples/upstream/report.star"
"$codemode" run "${upstreams[@]}" "$here/report.star"
echo "== run: an upstream tool error"
printf 'def main():\n    return fs.read_text_file(path = "/etc/passwd")\n' \
  | "$codemode" run "${upstreams[@]}" - || echo "(exit $?)"
