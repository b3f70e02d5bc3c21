import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { issueCreditNote } from "../../src/credit-notes/issue";
import { database } from "../../src/db/client";
import { finalizeInvoice } from "../../src/invoicing/finalize";
import { addOneOffLine } from "../../src/invoicing/one-off-lines";
import { storeInvoices } from "../../src/invoicing/write";
import { DomainError } from "../../src/lib/errors";
import { paidInvoice } from "../credit-notes/fixtures";
import { createAccount, get, post } from "../helpers";
import { createPlan, currentPeriod, generate, instanceKey, subscribe } from "./fixtures";

// §37 on §2: a guarded write whose retries run out answers 409 conflict ("try again"), never 500, and stores
// nothing; the writes that won are exactly what is stored.

async function draft() {
	const ratePlan = await createPlan({ base_fee: 10, charges: [] });
	const account = await createAccount(undefined, { invoice_grace_days: 3 });
	await subscribe(account.id, ratePlan.id, [instanceKey()]);
	const { invoices } = await generate(currentPeriod(), account.id);
	return invoices[0] as { id: string; account_id: string };
}

/**
 * env.DB whose every batch that writes fails as a lost race does: with `error` (the stale-write guard's abort by
 * default). Reads pass through.
 */
function contendedDb(error = "D1_ERROR: malformed JSON") {
	const sqlOf = new WeakMap<object, string>();
	const tag = (statement: D1PreparedStatement, sql: string): D1PreparedStatement => {
		sqlOf.set(statement, sql);
		const bind = statement.bind.bind(statement);
		return Object.assign(statement, {
			bind: (...values: unknown[]) => tag(bind(...values), sql),
		});
	};
	return new Proxy(env.DB, {
		get(target, name) {
			if (name === "prepare") return (sql: string) => tag(target.prepare(sql), sql);
			if (name === "batch") {
				return async (statements: D1PreparedStatement[]) => {
					if (statements.some((s) => /^\s*(INSERT|UPDATE)/i.test(sqlOf.get(s) ?? ""))) throw new Error(error);
					return target.batch(statements);
				};
			}
			const value = Reflect.get(target, name);
			return typeof value === "function" ? value.bind(target) : value;
		},
	});
}

async function expectContention(run: () => Promise<unknown>) {
	const error = await run().then(
		() => null,
		(e: unknown) => e,
	);
	expect(error).toBeInstanceOf(DomainError);
	expect((error as DomainError).code).toBe("conflict");
	expect((error as DomainError).message).toMatch(/try again/i);
}

describe("a guarded write that keeps losing its race", () => {
	it("a one-off line, a credit note and finalize end in conflict, not a raw D1 error", async () => {
		const open = await draft();
		const scope = { environment: "live" as const };
		const db = database(contendedDb());
		const line = { description: "Setup", amount: 5 };
		await expectContention(() => addOneOffLine({ db, scope, id: open.id, line }));
		await expectContention(() =>
			finalizeInvoice({ env: { ...env, DB: contendedDb() } as typeof env, scope, id: open.id }),
		);
		const paid = await paidInvoice(20);
		await expectContention(() =>
			issueCreditNote({ db, scope, id: paid.id, input: { amount: 5, reason: "other" } }),
		);
		expect((await get(`/v1/invoices/${open.id}`)).body).toMatchObject({ status: "draft", amount: 10 });
		expect((await get(`/v1/invoices/${paid.id}`)).body.amount_credited).toBe(0);
	});

	it("storing invoices whose credits keep being spent elsewhere ends in conflict", async () => {
		const db = database(contendedDb("D1_ERROR: credit_overdrawn"));
		const draft = {
			subscriptionId: "sub_x",
			accountId: "acct_x",
			ratePlanId: "plan_x",
			currency: "USD",
			sequence: 1,
			kind: "regular",
			lines: [],
		};
		await expectContention(() =>
			storeInvoices({
				db,
				scope: { environment: "live" },
				window: { period: currentPeriod() } as never,
				drafts: [draft, { ...draft, subscriptionId: "sub_y" }] as never,
				now: new Date().toISOString(),
			}),
		);
	});
});

describe("POST /v1/invoices/{id}/lines under contention", () => {
	it("50 at once on one draft: only 201 and 409, and the stored lines are exactly the 201s", {
		timeout: 120_000,
	}, async () => {
		const open = await draft();
		const responses = await Promise.all(
			Array.from({ length: 50 }, (_, i) =>
				post(`/v1/invoices/${open.id}/lines`, { description: `Line ${i}`, amount: i + 1 }),
			),
		);
		const statuses = responses.map((r) => r.status);
		expect(
			statuses.filter((s) => s !== 201 && s !== 409),
			JSON.stringify(statuses),
		).toEqual([]);
		for (const r of responses.filter((r) => r.status === 409)) expect(r.body.error.code).toBe("conflict");
		const won = responses.flatMap((r, i) => (r.status === 201 ? [`Line ${i}`] : []));
		const invoice = (await get(`/v1/invoices/${open.id}`)).body;
		const stored = invoice.line_items
			.filter((l: { metric: string }) => l.metric === "one-off")
			.map((l: { description: string }) => l.description);
		expect(stored.sort()).toEqual(won.sort());
		const wonAmount = responses.reduce((sum, r, i) => sum + (r.status === 201 ? i + 1 : 0), 0);
		expect(invoice.amount).toBe(10 + wonAmount);
	});

	it("finalize racing line additions: no 500, and the issued invoice bills the lines that were added", {
		timeout: 120_000,
	}, async () => {
		for (let run = 0; run < 3; run++) {
			const open = await draft();
			const adds = Array.from({ length: 12 }, (_, i) =>
				post(`/v1/invoices/${open.id}/lines`, { description: `Extra ${i}`, amount: 1 }),
			);
			const finalize = post(`/v1/invoices/${open.id}/finalize`);
			const responses = await Promise.all([...adds, finalize]);
			const statuses = responses.map((r) => r.status);
			expect(
				statuses.filter((s) => s >= 500),
				JSON.stringify(statuses),
			).toEqual([]);
			const invoice = (await get(`/v1/invoices/${open.id}`)).body;
			const added = responses.slice(0, 12).filter((r) => r.status === 201).length;
			expect(invoice.amount).toBe(10 + added);
		}
	});
});
