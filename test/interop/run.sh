#!/usr/bin/env bash
# Interop checks against MCP clients other than our own: the TypeScript SDK
# client and the MCP Inspector CLI. Needs Node.js and the npm registry.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/tuitbot" "$root/cmd/tuitbot"
export TUITBOT_HOME="$work/home"
npm install --no-audit --no-fund --silent
node client.mjs "$work/tuitbot" mcp serve --sandbox
node dynamic.mjs "$work/tuitbot" mcp serve --sandbox --dynamic-toolsets
out=$(npx -y @modelcontextprotocol/inspector@2.12.0 --cli "$work/tuitbot" mcp serve --sandbox --method tools/list --strict 2>"$work/inspector.err")
# A here-string, not a pipe: with pipefail, grep -q closing the pipe early
# would fail the check on a correct listing.
grep -q '"name": "x_get_me"' <<<"$out" || { echo "inspector: tools/list did not list x_get_me"; cat "$work/inspector.err"; exit 1; }
if grep -qE '^(Error|Warning): tool' "$work/inspector.err"; then
  echo "inspector: schema portability problems:"; grep -A3 -E '^(Error|Warning): tool' "$work/inspector.err"; exit 1
fi
echo "inspector: tools/list ok, schemas portable"
for method in prompts/list resources/list; do
  out=$(npx -y @modelcontextprotocol/inspector@2.12.0 --cli "$work/tuitbot" mcp serve --sandbox --method "$method" 2>"$work/inspector.err")
  case $method in
    prompts/list) want=('"name": "reply_to_mentions_safely"' '"name": "plan_a_thread"' '"name": "review_my_pending_approvals"') ;;
    resources/list) want=('"uri": "tuitbot://policy"' '"uri": "tuitbot://today"' '"uri": "tuitbot://approvals/pending"') ;;
  esac
  for w in "${want[@]}"; do
    grep -qF "$w" <<<"$out" || { echo "inspector: $method did not list $w"; cat "$work/inspector.err"; exit 1; }
  done
  echo "inspector: $method ok"
done
