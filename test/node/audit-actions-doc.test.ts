/// <reference types="node" />
/**
 * docs/audit-log.md names every action the service writes. The actions are read from src/: the string value of
 * every `action:` property, and the action argument of `updateAudited(…)` — the two ways a verb names its record.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = resolve("src");
const ACTION = /^[a-z][a-z_]*\.[a-z_]+$/;

function sourceFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return sourceFiles(path);
		return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
	});
}

function actionsIn(file: string): string[] {
	const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
	const found: string[] = [];
	const visit = (node: ts.Node) => {
		if (
			ts.isPropertyAssignment(node) &&
			ts.isIdentifier(node.name) &&
			node.name.text === "action" &&
			ts.isStringLiteral(node.initializer)
		) {
			found.push(node.initializer.text);
		}
		if (
			ts.isCallExpression(node) &&
			ts.isIdentifier(node.expression) &&
			node.expression.text === "updateAudited"
		) {
			const action = node.arguments[6];
			if (action && ts.isStringLiteral(action)) found.push(action.text);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

const written = [...new Set(sourceFiles(SRC).flatMap(actionsIn))].sort();
const doc = readFileSync(resolve("docs/audit-log.md"), "utf8");

describe("docs/audit-log.md", () => {
	it("finds the actions the service writes", () => {
		expect(written.length).toBeGreaterThan(30);
		for (const action of written) expect(action).toMatch(ACTION);
		expect(written).toContain("agent.updated"); // through updateAudited
		expect(written).toContain("invoice.finalized"); // through an `action:` property
	});

	it("lists every one of them", () => {
		expect(written.filter((action) => !doc.includes(`\`${action}\``))).toEqual([]);
	});
});
