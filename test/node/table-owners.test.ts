/// <reference types="node" />
/**
 * A table with an owner is written through the owner's helpers (STYLE: one way to write a table): for payments,
 * src/payments/payments.ts (refundInsert, paymentInsert). The manual pay of payments/pay-and-void.ts is the one other
 * writer: invoicing/ may not import payments/, which imports it (test/node/layout.test.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve("src");

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return sources(path);
		return entry.name.endsWith(".ts") ? [path] : [];
	});
}

/** Files of src/ that insert into, update or delete from `table`, by drizzle or by SQL. */
function writersOf(table: string): string[] {
	const writes = new RegExp(
		`\\.(insert|update|delete)\\(\\s*${table}\\s*\\)|\\b(INSERT\\s+(OR\\s+\\w+\\s+)?INTO|UPDATE|DELETE\\s+FROM)\\s+${table}\\b`,
	);
	return sources(SRC)
		.filter((file) => writes.test(readFileSync(file, "utf8")))
		.map((file) => relative(SRC, file))
		.sort();
}

describe("table owners", () => {
	it("payments are written by their owner, src/payments/payments.ts, and invoicing's manual pay only", () => {
		expect(writersOf("payments")).toEqual(["payments/pay-and-void.ts", "payments/payments.ts"]);
	});
});
