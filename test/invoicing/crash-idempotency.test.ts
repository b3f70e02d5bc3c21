import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, get, post } from "../helpers";
import { crashBeforeAnswer } from "../support/crash-before-answer";
import {
	createPlan,
	currentPeriod,
	customer,
	generate,
	generateOne,
	instanceKey,
	outboxEvents,
	subscribe,
} from "./fixtures";

// §37 on §14: each write on invoices commits with its Idempotency-Key's answer. A Worker killed after the write,
// before the answer was stored, leaves the key committed: the repeat, 62 s later, answers what was done — never
// does it again, never answers an error for it.

const headers = (key: string) => ({ headers: { "Idempotency-Key": key } });

async function draft() {
	const ratePlan = await createPlan({ base_fee: 10, charges: [] });
	const account = await createAccount(undefined, { invoice_grace_days: 3 });
	await subscribe(account.id, ratePlan.id, [instanceKey()]);
	const { invoices } = await generate(currentPeriod(), account.id);
	expect(invoices[0]?.status).toBe("draft");
	return invoices[0] as { id: string; account_id: string };
}

async function openInvoice() {
	const { account } = await customer({ base_fee: 40, charges: [] });
	return generateOne(currentPeriod(), account.id);
}

const count = async (sql: string, ...params: unknown[]) =>
	(
		await env.DB.prepare(sql)
			.bind(...params)
			.first<{ n: number }>()
	)?.n;

describe("invoice writes whose Worker died before their answer was stored", () => {
	it("a one-off line: the repeat answers the draft with one line, even after finalize", async () => {
		const invoice = await draft();
		const path = `/v1/invoices/${invoice.id}/lines`;
		const line = { description: "Onboarding workshop", amount: 450 };
		const send = () => post(path, line, headers("line-crash"));
		const { repeat } = await crashBeforeAnswer(path, async () => {
			const answer = await send();
			// The case: the draft is finalized before the repeat comes.
			if (answer.status === 500) expect((await post(`/v1/invoices/${invoice.id}/finalize`)).status).toBe(200);
			return answer;
		});
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(201);
		expect(repeat.headers.get("Idempotent-Replayed")).toBe("true");
		const oneOff = repeat.body.line_items.filter((l: { metric: string }) => l.metric === "one-off");
		expect(oneOff).toEqual([
			{
				metric: "one-off",
				description: "Onboarding workshop",
				quantity: 1,
				amount: 450,
				original_amount: 450,
				original_currency: "USD",
			},
		]);
		expect(repeat.body).toMatchObject({ status: "open", amount: 460 });
		expect(
			await count(
				"SELECT count(*) AS n FROM invoice_lines WHERE invoice_id = ?1 AND metric = 'one-off'",
				invoice.id,
			),
		).toBe(1);
	});

	it("finalize: the repeat answers the issued invoice with the number it got, and numbers nothing else", async () => {
		const invoice = await draft();
		const path = `/v1/invoices/${invoice.id}/finalize`;
		const { repeat } = await crashBeforeAnswer(path, () => post(path, undefined, headers("finalize-crash")));
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
		expect(repeat.body).toEqual((await get(`/v1/invoices/${invoice.id}`)).body);
		expect(repeat.body.number).toMatch(/^INV-\d{6}$/);
		expect(await outboxEvents("invoice.created", invoice.id)).toHaveLength(1);
	});

	it("pay: the repeat answers the paid invoice, with one payment", async () => {
		const invoice = await openInvoice();
		const path = `/v1/invoices/${invoice.id}/pay`;
		const { repeat } = await crashBeforeAnswer(path, () =>
			post(path, { reference: "wire-9" }, headers("pay-crash")),
		);
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
		expect(repeat.body).toMatchObject({ status: "paid", amount_paid: 40 });
		expect(repeat.body.payments).toHaveLength(1);
		expect(await outboxEvents("payment.successful", invoice.id)).toHaveLength(1);
	});

	it("void: the repeat answers the void invoice", async () => {
		const invoice = await openInvoice();
		const path = `/v1/invoices/${invoice.id}/void`;
		const { repeat } = await crashBeforeAnswer(path, () => post(path, undefined, headers("void-crash")));
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
		expect(repeat.headers.get("Idempotent-Replayed")).toBe("true");
		expect(repeat.body.status).toBe("void");
		expect(await outboxEvents("invoice.voided", invoice.id)).toHaveLength(1);
	});

	it("generate: the repeat answers the invoices the first call made, not an empty list", async () => {
		const { account } = await customer({ base_fee: 12, charges: [] });
		const path = "/v1/invoices/generate";
		const body = { billing_period: currentPeriod(), account_id: account.id };
		const { repeat } = await crashBeforeAnswer(path, () =>
			post(path, body, headers(`gen-crash-${account.id}`)),
		);
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(201);
		expect(repeat.body.invoices).toHaveLength(1);
		expect(repeat.body.invoices[0]).toEqual((await get(`/v1/invoices/${repeat.body.invoices[0].id}`)).body);
		expect(await count("SELECT count(*) AS n FROM invoices WHERE account_id = ?1", account.id)).toBe(1);
	});
});
