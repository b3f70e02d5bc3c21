import { beforeAll, describe, expect, it } from "vitest";
import { createAccount, expectError, get } from "../helpers";
import {
	createPlan,
	currentPeriod,
	generate,
	generateOne,
	type Invoice,
	instanceKey,
	subscribe,
} from "./fixtures";

// GET /v1/invoices and GET /v1/invoices/{id}: filters, pagination (newest first), line items on every item.
const plan = {
	base_fee: 3,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 1,
		},
	],
};

let accountA: string;
let accountB: string;
let subscriptionA2: string;
let invoices: Invoice[];

beforeAll(async () => {
	const ratePlan = await createPlan(plan);
	accountA = (await createAccount()).id;
	accountB = (await createAccount()).id;
	await subscribe(accountA, ratePlan.id, [instanceKey()]);
	subscriptionA2 = (await subscribe(accountA, ratePlan.id, [instanceKey()])).id;
	await subscribe(accountB, ratePlan.id, [instanceKey()]);
	const forA = await generate(currentPeriod(), accountA);
	invoices = [...forA.invoices, await generateOne(currentPeriod(), accountB)];
});

describe("GET /v1/invoices", () => {
	it("lists newest first with totals and line items", async () => {
		const response = await get("/v1/invoices?limit=100");
		expect(response.status).toBe(200);
		expect(response.body).toMatchObject({ total: 3, limit: 100, offset: 0 });
		expect(response.body.invoices).toEqual([...invoices].reverse());
		for (const invoice of response.body.invoices as Invoice[]) {
			expect(invoice.line_items).toEqual([
				{
					metric: "base_fee",
					description: "Base fee",
					quantity: 1,
					amount: 3,
					original_amount: 3,
					original_currency: "USD",
				},
				{
					metric: "calls",
					description: "calls — 0 units",
					quantity: 0,
					amount: 0,
					original_amount: 0,
					original_currency: "USD",
				},
			]);
		}
	});

	it("pages with limit and offset", async () => {
		const first = await get("/v1/invoices?limit=2&offset=0");
		const second = await get("/v1/invoices?limit=2&offset=2");
		expect(first.body.invoices.map((i: Invoice) => i.id)).toEqual([invoices[2]?.id, invoices[1]?.id]);
		expect(second.body.invoices.map((i: Invoice) => i.id)).toEqual([invoices[0]?.id]);
		expect(second.body).toMatchObject({ total: 3, limit: 2, offset: 2 });
		expect(second.body.invoices[0].line_items).toHaveLength(2);
	});

	it.each([
		["account_id", () => accountA, 2],
		["account_id", () => accountB, 1],
		["subscription_id", () => subscriptionA2, 1],
		["status", () => "open", 3],
		["status", () => "paid", 0],
		["billing_period", () => currentPeriod(), 3],
		["billing_period", () => "2001-01", 0],
	])("filters by %s", async (name, value, count) => {
		const response = await get(`/v1/invoices?${name}=${value()}`);
		expect(response.status).toBe(200);
		expect(response.body.total).toBe(count);
		expect(response.body.invoices).toHaveLength(count);
	});

	it.each([
		["limit=0", "limit"],
		["limit=101", "limit"],
		["offset=-1", "offset"],
		["status=unpaid", "status"],
		["billing_period=2026-13", "billing_period"],
		["customer=acme", "customer"],
	])("rejects %s with 400", async (query, path) => {
		const error = expectError(await get(`/v1/invoices?${query}`), 400, "validation_error");
		expect(error.details?.map((detail) => detail.path).join(" ")).toContain(path);
	});
});

describe("GET /v1/invoices/{invoice_id}", () => {
	it("returns the invoice as listed", async () => {
		const response = await get(`/v1/invoices/${invoices[1]?.id}`);
		expect(response.status).toBe(200);
		expect(response.body).toEqual(invoices[1]);
	});

	it("answers 404 for an unknown id", async () => {
		expectError(await get("/v1/invoices/inv_unknown"), 404, "not_found");
	});
});
