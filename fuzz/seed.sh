#!/bin/sh
# Seeds every target's corpus from the golden tests (tests/golden/*/*.star
# and their .expected JSON lines), plus a few inputs in each target's own
# format. Corpora are local (git-ignored); run from the repository root or
# from fuzz/.
set -eu
cd "$(dirname "$0")"
golden=../tests/golden
mkdir -p corpus/lex corpus/parse_resolve corpus/execute corpus/json_decode \
    corpus/format corpus/search corpus/bind corpus/mcp_call
# Golden file names repeat across lang/, vm/ and builtins/: keep the folder.
for f in "$golden"/*/*.star; do
    name="$(basename "$(dirname "$f")")-$(basename "$f")"
    for dir in lex parse_resolve execute; do
        cp "$f" "corpus/$dir/$name"
    done
done
# Programs that reach every conformance capability.
n=0
for call in 'conformance.echo(value = "x")' 'conformance.add(a = 1, b = 2)' \
    'conformance.add(a = 9223372036854775807, b = 1)' 'conformance.present(s = "a", f = 1.5)' \
    'conformance.items(n = 3)' 'conformance.items(n = 100000)' 'conformance.deep()' \
    'conformance.fail(public = True)' 'conformance.fail(public = False)' 'conformance.nan()' \
    'conformance.huge_unsigned()' 'conformance.sleep(ms = 5)' 'conformance.denied()' \
    'conformance.policy_error()' 'conformance.hidden()' 'conformance.echo(value = 1)'; do
    n=$((n + 1))
    printf 'def main():\n    r = %s\n    return [r, dir(conformance), json.encode(r)]\n' "$call" \
        > "corpus/execute/conformance-$n.star"
done
# json_decode: every expected outcome line that is JSON, and golden sources.
for f in "$golden"/*/*.expected; do
    case "$(head -c 1 "$f")" in
        "{") cp "$f" "corpus/json_decode/$(basename "$(dirname "$f")")-$(basename "$f")" ;;
    esac
done
# format, search, bind, mcp_call: their own small seeds, then golden text as
# format strings, queries and program sources.
printf '%%s and %%r\000["a", 1]' > corpus/format/pair
printf '%%(k)d %%x %%o %%e %%g %%c\000{"k": 1}' > corpus/format/mapping
printf '{} {0} {name} {!r} {1!s} {{}}\000{"name": "n"}' > corpus/format/braces
printf '%%5.2f %%-4d %%%%\0002.5' > corpus/format/float
for q in 'look up record' 'records.lookup' 'create pull request review' \
    'GitHub.Pulls.createReview' 'conformance echo' 'list the issues of a repo' \
    'shipping quote weight' 'HTTPServer v2 items' '  '; do
    printf '%s' "$q" > "corpus/search/$(printf '%s' "$q" | tr -c 'a-zA-Z0-9' _)"
done
printf '\000\000{"key": "a", "limit": 2}' > corpus/bind/lookup
printf '\001\000{"count": 2, "active": true, "score": 0.5, "label": null}' > corpus/bind/search
printf '\002\000{"weight_grams": 5001}' > corpus/bind/quote
printf '\003\000{"owner": "o", "repo": "r", "per_page": 100, "labels": ["a"]}' > corpus/bind/github
printf '\000{"query": "records lookup"}' > corpus/mcp_call/search
printf '\001{"name": "conformance.echo"}' > corpus/mcp_call/describe
printf '\002{"source": "def main():\\n    return conformance.items(n = 2)\\n"}' \
    > corpus/mcp_call/execute
printf '\002{"source": 1, "more": true}' > corpus/mcp_call/invalid
i=0
for f in "$golden"/builtins/*format*.star "$golden"/builtins/*percent*.star; do
    [ -e "$f" ] || continue
    i=$((i + 1))
    { cat "$f"; printf '\000[1, "a", 2.5, null, [true]]'; } > "corpus/format/golden-$i"
done
for f in "$golden"/lang/*.star; do
    i=$((i + 1))
    # A mcp_call input: tool byte 2 (execute) and the source as raw text.
    { printf '\002'; cat "$f"; } > "corpus/mcp_call/golden-$i"
done
echo "seeded $(find corpus -type f | wc -l) files"
