#!/usr/bin/env bash
# regen.sh — regenerate the golden expected outputs from the semantic reference.
#
# Usage:
#   tests/golden/regen.sh                 # every tests/golden/*/*.star
#   tests/golden/regen.sh FILE.star ...   # only the given cases
#
# For each NAME.star it runs the reference interpreter (a command that runs
# one file under real starlark-go and prints its outcome, see README.md) and
# writes NAME.expected beside it: the reference's combined stdout+stderr with
# the trailing newline stripped (a single line).
#
# The reference is the command that $STARLARK_REF names; there is no default.
# This script is a maintenance tool only: tests and CI never run it, they read
# the committed .expected files. Review the diff of the .expected files after
# regenerating before committing them.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
ref="${STARLARK_REF:-}"
if [[ -z "$ref" ]]; then
  echo "regen.sh: set STARLARK_REF to the reference command (see README.md)" >&2
  exit 2
fi
if [[ ! -x "$ref" ]]; then
  echo "regen.sh: reference not found or not executable: $ref (set STARLARK_REF)" >&2
  exit 2
fi

if [[ $# -gt 0 ]]; then
  files=("$@")
else
  shopt -s nullglob
  files=("$here"/*/*.star)
fi

count=0
status=0
for f in "${files[@]}"; do
  case "$f" in
    *.star) ;;
    *) echo "regen.sh: skipping $f (not a .star file)" >&2; continue ;;
  esac
  if [[ ! -f "$f" ]]; then
    echo "regen.sh: no such file: $f" >&2
    status=1
    continue
  fi
  out="${f%.star}.expected"
  # The reference exits 1 on any program error; that is an expected outcome.
  got="$("$ref" "$f" 2>&1 || true)"
  # A well-formed outcome is one line in one of the classes described in
  # README.md; anything else (a crash of the reference) is reported, not written.
  if [[ "$got" == *$'\n'* ]] || ! [[ "$got" =~ ^(\{\"result\":|syntax\ error:\ |resolve\ error:\ |runtime\ error:\ |invalid\ program:\ ) ]]; then
    echo "regen.sh: $f: unexpected reference output, $out not written:" >&2
    printf '%s\n' "$got" >&2
    status=1
    continue
  fi
  # $(...) already strips trailing newlines; write without one.
  printf '%s' "$got" > "$out"
  count=$((count + 1))
done
echo "regen.sh: wrote $count expected file(s)" >&2
exit "$status"
