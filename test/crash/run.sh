#!/usr/bin/env bash
# The crash tests, with node:test's spec output in test-results/crash.log for the CI summary:
# part 1, kill -9 during an Idempotency-Key invoice generation, restart, exactly-once completion (about a
# minute); part 2, kill -9 mid-ingest with retries across an instance move, nothing lost and nothing counted twice
# (about 20 seconds); part 3, kill -9 while a refunding credit note and a draft's line are stored, one of each
# after the repeat (under two minutes, up to one more when a kill lands before the write).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p test-results
export WRANGLER_SEND_METRICS=false
node_modules/.bin/node --test --test-reporter=spec test/crash/generate-crash.test.mjs \
	test/crash/ingest-move-crash.test.mjs test/crash/money-writes-crash.test.mjs 2>&1 | tee test-results/crash.log
