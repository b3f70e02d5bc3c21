#!/usr/bin/env bash
# The SDKs against a real `wrangler dev` (kill -9 and restart, a 429 storm, shutdown): the TypeScript SDK as built
# in sdk/typescript/dist (node:test), then the Python SDK's unit and live tests (unittest). Each runner's output goes
# to test-results/<suite>.log, which scripts/ci-summary.mjs counts. About 3–4 minutes, mostly waiting on the
# rate limiter's minute.
set -euo pipefail
cd "$(dirname "$0")/.."
export WRANGLER_SEND_METRICS=false
mkdir -p test-results
# Node 24, pinned as a dev dependency (wrangler needs ≥ 22), even where the machine's node is older.
NODE="$PWD/node_modules/.bin/node"
[ -x "$NODE" ] || NODE="$(command -v node)"
[ -f sdk/typescript/dist/index.js ] || npm run build:sdk
"$NODE" --test --test-reporter=spec --test-concurrency=1 sdk/typescript/test/live/*.test.mjs 2>&1 |
	tee test-results/typescript-sdk.log
(cd sdk/python && NODE="$NODE" python3 -m unittest discover -v -s tests -t .) 2>&1 |
	tee test-results/python-sdk.log
