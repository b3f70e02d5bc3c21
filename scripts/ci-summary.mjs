// The last line CI prints: every test counted, runtime, browser and the others, as "N passed, N failed".
// Suites outside vitest write their runner's output to test-results/<suite>.log: node:test's spec reporter
// (closing "ℹ pass N" / "ℹ fail N" lines) or Python's unittest ("Ran N tests", then "OK" or "FAILED (…)").
import { existsSync, readdirSync, readFileSync } from "node:fs";

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

const logs = existsSync("test-results")
	? readdirSync("test-results").filter((name) => name.endsWith(".log"))
	: [];
for (const name of logs) {
	const text = readFileSync(`test-results/${name}`, "utf8");
	const ran = /^Ran (\d+) tests? in /m.exec(text);
	if (ran) {
		const total = Number(ran[1]);
		const failures =
			Number(/failures=(\d+)/.exec(text)?.[1] ?? 0) + Number(/errors=(\d+)/.exec(text)?.[1] ?? 0);
		const skips = Number(/skipped=(\d+)/.exec(text)?.[1] ?? 0);
		passed += total - failures - skips;
		failed += failures;
		skipped += skips;
		continue;
	}
	passed += Number(/^\S*\s*pass (\d+)$/m.exec(text)?.[1] ?? 0);
	failed += Number(/^\S*\s*fail (\d+)$/m.exec(text)?.[1] ?? 0);
	skipped += Number(/^\S*\s*skipped (\d+)$/m.exec(text)?.[1] ?? 0);
}

console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
