import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { periodWindow } from "../../src/billing-period/period";
import { database } from "../../src/db/client";
import type { Scope } from "../../src/db/scope";
import type { ComputedInvoice } from "../../src/invoicing/computed";
import { storeInvoice, storeInvoices } from "../../src/invoicing/write";
import { Decimal } from "../../src/lib/decimal";

// Storage is per test file, so this file's environment numbers its invoices from 1.
const scope: Scope = { environment: "test" };
const window = periodWindow("2026-10");
const NOW = "2026-11-01T00:05:00.000Z";

/** A D1 binding that counts the batches sent through it. */
function countingD1() {
	const calls = { batches: 0, statements: 0 };
	const d1 = new Proxy(env.DB, {
		get(target, property) {
			const value = Reflect.get(target, property);
			if (property === "batch") {
				return (statements: D1PreparedStatement[]) => {
					calls.batches++;
					calls.statements += statements.length;
					return target.batch(statements);
				};
			}
			return typeof value === "function" ? value.bind(target) : value;
		},
	});
	return { d1, calls };
}

/** A regular draft of base fee 10 plus `calls` calls at $2, with agent shares of `agents` agents. */
function draft(subscriptionId: string, calls: number, agents = 1): ComputedInvoice {
	const shares = Array.from({ length: agents }, (_, i) => ({
		agent_id: `agt_${String(i).padStart(26, "0")}`,
		quantity: String(calls / agents),
	}));
	const lines = [
		{
			metric: "base_fee",
			description: "Base fee",
			quantity: Decimal.ONE,
			amount: Decimal.from(10),
			agentShares: null,
		},
		{
			metric: "calls",
			description: `Calls: ${calls}`,
			quantity: Decimal.from(calls),
			amount: Decimal.from(2 * calls),
			agentShares: shares,
		},
	];
	return {
		subscriptionId,
		accountId: "acct_write_test",
		ratePlanId: "plan_write_test",
		kind: "regular",
		sequence: 1,
		currency: "USD",
		amount: Decimal.from(10 + 2 * calls),
		lines,
	};
}

async function storedNumbers(): Promise<number[]> {
	const { results } = await env.DB.prepare(
		"SELECT number FROM invoices WHERE environment = 'test' ORDER BY number",
	).all<{ number: number }>();
	return results.map((row) => row.number);
}

async function count(sql: string, ...params: unknown[]): Promise<number> {
	return (
		(
			await env.DB.prepare(sql)
				.bind(...params)
				.first<{ n: number }>()
		)?.n ?? -1
	);
}

describe("storing a group of invoices", () => {
	// Invoices are issued to an account: its net terms and bill-to are read with its credit grants (§17, §20).
	beforeAll(async () => {
		await env.DB.prepare(
			"INSERT INTO accounts (id, environment, name, email, currency, created_at, updated_at, net_terms_days) VALUES ('acct_write_test', 'test', 'Writer', 'w@example.com', 'USD', ?1, ?1, 15)",
		)
			.bind(NOW)
			.run();
	});

	it("stores 30 invoices, their lines and their outbox rows in one D1 batch, numbered in draft order", async () => {
		const drafts = Array.from({ length: 30 }, (_, i) => draft(`sub_group_${i}`, i + 1));
		const { d1, calls } = countingD1();

		const stored = await storeInvoices({ db: database(d1), scope, window, drafts, now: NOW });

		// One read of the issue terms (settle expired credits, the accounts, their grants), then one write batch:
		// the counter, then one statement each for invoices, lines, outbox rows and audit records, and one that
		// reads back the collections the batch stored (docs/payments.md), whatever the group's size.
		expect(calls.batches).toBe(2);
		expect(calls.statements).toBe(3 + 6);
		expect(stored.map((invoice) => invoice.number)).toEqual(
			Array.from({ length: 30 }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`),
		);
		// subscription i: base fee 10 + (i + 1) calls × $2
		expect(stored.map((invoice) => invoice.amount)).toEqual(drafts.map((_, i) => 10 + 2 * (i + 1)));
		expect(stored[4]).toMatchObject({
			subscription_id: "sub_group_4",
			kind: "regular",
			status: "open",
			billing_period: "2026-10",
			created_at: NOW,
			due_at: "2026-11-16T00:05:00.000Z",
			bill_to: { name: "Writer", email: "w@example.com", billing_address: null },
			line_items: [
				{ metric: "base_fee", description: "Base fee", quantity: 1, amount: 10 },
				{ metric: "calls", description: "Calls: 5", quantity: 5, amount: 10 },
			],
		});
		expect(await storedNumbers()).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
		const ids = stored.map((invoice) => invoice.id);
		expect(
			await count(
				"SELECT count(*) AS n FROM invoice_lines WHERE invoice_id IN (SELECT value FROM json_each(?))",
				JSON.stringify(ids),
			),
		).toBe(60);
		const shares = await env.DB.prepare(
			"SELECT agent_shares FROM invoice_lines WHERE invoice_id = ? AND metric = 'calls'",
		)
			.bind(stored[4]?.id)
			.first<{ agent_shares: string }>();
		expect(JSON.parse(shares?.agent_shares ?? "null")).toEqual([
			{ agent_id: `agt_${"0".repeat(26)}`, quantity: "5" },
		]);
		const announced = await env.DB.prepare(
			"SELECT json_extract(data, '$.invoice_id') AS id, json_extract(data, '$.amount') AS amount FROM webhook_events WHERE event = 'invoice.created' AND environment = 'test'",
		).all<{ id: string; amount: number }>();
		expect(announced.results.map((row) => row.id).sort()).toEqual([...ids].sort());
		expect(announced.results.find((row) => row.id === stored[4]?.id)?.amount).toBe(20);
	});

	it("splits lines too large for one JSON parameter over several statements of the same batch", async () => {
		// 400 agents × ~60 bytes of shares per line: ~24 KB per invoice, ~120 KB for five.
		const drafts = Array.from({ length: 5 }, (_, i) => draft(`sub_wide_${i}`, 400, 400));
		const { d1, calls } = countingD1();
		const stored = await storeInvoices({ db: database(d1), scope, window, drafts, now: NOW });
		expect(calls.batches).toBe(2);
		expect(calls.statements).toBeGreaterThan(3 + 4);
		expect(stored).toHaveLength(5);
		const ids = JSON.stringify(stored.map((invoice) => invoice.id));
		expect(
			await count(
				"SELECT count(*) AS n FROM invoice_lines WHERE invoice_id IN (SELECT value FROM json_each(?))",
				ids,
			),
		).toBe(10);
	});

	it("after losing a race, stores the rest one by one, skipping what the winner stored, without a gap", async () => {
		const before = await storedNumbers();
		const last = before.at(-1) ?? 0;
		// A concurrent generator stored B's invoice after this one read the period's state.
		const raced = await storeInvoice(database(env.DB), scope, window, draft("sub_race_b", 1), NOW);
		expect(raced?.number).toBe(`INV-${String(last + 1).padStart(6, "0")}`);

		const { d1, calls } = countingD1();
		const drafts = [draft("sub_race_a", 1), draft("sub_race_b", 7), draft("sub_race_c", 2)];
		const stored = await storeInvoices({ db: database(d1), scope, window, drafts, now: NOW });

		// The read of the issue terms, the group's batch, rolled back as a whole, then one batch per draft.
		expect(calls.batches).toBe(5);
		expect(stored.map((invoice) => [invoice.subscription_id, invoice.number])).toEqual([
			["sub_race_a", `INV-${String(last + 2).padStart(6, "0")}`],
			["sub_race_c", `INV-${String(last + 3).padStart(6, "0")}`],
		]);
		expect(await storedNumbers()).toEqual([...before, last + 1, last + 2, last + 3]);
		// B keeps the winner's invoice: 10 + 1 × $2, not 10 + 7 × $2.
		expect(await count("SELECT count(*) AS n FROM invoices WHERE subscription_id = 'sub_race_b'")).toBe(1);
		const winner = await env.DB.prepare(
			"SELECT amount FROM invoices WHERE subscription_id = 'sub_race_b'",
		).first<{
			amount: string;
		}>();
		expect(winner?.amount).toBe("12");
		expect(
			await count(
				"SELECT count(*) AS n FROM webhook_events WHERE event = 'invoice.created' AND json_extract(data, '$.subscription_id') LIKE 'sub_race_%'",
			),
		).toBe(3);
	});
});
