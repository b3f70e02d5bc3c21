#!/usr/bin/env bash
# The crash test (part 1: kill -9 during an Idempotency-Key invoice generation, restart, exactly-once completion),
# with node:test's spec output in test-results/crash.log for the CI summary. About two minutes, most of it the
# 60 seconds the dead request's key stays in use.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p test-results
export WRANGLER_SEND_METRICS=false
node_modules/.bin/node --test --test-reporter=spec test/crash/generate-crash.test.mjs 2>&1 | tee test-results/crash.log
