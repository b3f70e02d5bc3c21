/// <reference types="node" />
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../../src/app";

/** The document /v1/openapi.json serves. */
export async function servedDocument() {
	const response = await createApp().request("/v1/openapi.json");
	if (response.status !== 200) throw new Error(`/v1/openapi.json answered ${response.status}`);
	return (await response.json()) as any;
}

/** A fresh directory under test-results/ (git-ignored), inside the project so that its node_modules resolve. */
export function scratchDir(name: string): string {
	const dir = join(process.cwd(), "test-results", name);
	mkdirSync(dir, { recursive: true });
	return dir;
}

/** Writes the served document to `<dir>/openapi.json` and returns its path. */
export async function dumpDocument(dir: string): Promise<string> {
	const path = join(dir, "openapi.json");
	writeFileSync(path, JSON.stringify(await servedDocument(), null, 2));
	return path;
}
