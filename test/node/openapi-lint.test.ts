/// <reference types="node" />
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { dumpDocument, scratchDir } from "./openapi-document";

// Offline and quiet: no telemetry, no update checks (redocly.yaml also says telemetry: off).
const env = {
	...process.env,
	REDOCLY_TELEMETRY: "off",
	REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
	NO_UPDATE_NOTIFIER: "1",
	CI: "true",
};

function run(script: string, args: string[]) {
	return spawnSync(process.execPath, [script, ...args], { env, encoding: "utf8", timeout: 120_000 });
}

describe("the OpenAPI document under the linters", () => {
	it("is clean under Redocly's recommended rules", async () => {
		const path = await dumpDocument(scratchDir("openapi-lint"));
		const result = run("node_modules/@redocly/cli/bin/cli.js", [
			"lint",
			path,
			"--config",
			"redocly.yaml",
			"--format",
			"json",
		]);
		const report = JSON.parse(result.stdout) as {
			totals: { errors: number; warnings: number };
			problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
		};
		const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
		expect(problems).toEqual([]);
		expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
		expect(result.status).toBe(0);
	}, 120_000);

	it("is clean under Spectral's spectral:oas rules", async () => {
		const path = await dumpDocument(scratchDir("openapi-lint"));
		const result = run("node_modules/@stoplight/spectral-cli/dist/index.js", [
			"lint",
			path,
			"--ruleset",
			".spectral.yaml",
			"--fail-severity",
			"hint",
			"--format",
			"text",
		]);
		expect(`${result.stdout}${result.stderr}`.trim()).toMatch(
			/^(No results with a severity of 'hint' or higher found!)?$/,
		);
		expect(result.status).toBe(0);
	}, 120_000);
});
