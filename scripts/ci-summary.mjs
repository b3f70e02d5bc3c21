// The last line CI prints: every test counted, runtime and browser, as "N passed, N failed".
import { existsSync, readFileSync } from "node:fs";

let passed = 0;
let failed = 0;
let skipped = 0;

const vitest = "test-results/vitest.json";
if (existsSync(vitest)) {
	const report = JSON.parse(readFileSync(vitest, "utf8"));
	passed += report.numPassedTests;
	failed += report.numFailedTests;
	skipped += report.numPendingTests + report.numTodoTests;
}

// node:test's spec reporter ends with "ℹ pass N" and "ℹ fail N" lines.
const consoleLog = "test-results/console.log";
if (existsSync(consoleLog)) {
	const text = readFileSync(consoleLog, "utf8");
	passed += Number(/^\S*\s*pass (\d+)$/m.exec(text)?.[1] ?? 0);
	failed += Number(/^\S*\s*fail (\d+)$/m.exec(text)?.[1] ?? 0);
	skipped += Number(/^\S*\s*skipped (\d+)$/m.exec(text)?.[1] ?? 0);
}

console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
