import { describe, expect, it } from "vitest";
import { post } from "../helpers";
import { sdkKey } from "../invoicing/fixtures";
import { invoicesOf, thresholdCustomer, thresholdInvoices } from "./fixtures";

describe("a burst of events crossing a threshold", () => {
	it("makes exactly one threshold invoice per crossing, whatever the concurrency", async () => {
		// $1 a call up to 10, then $0.50; threshold $20: 40 calls are $25 — one crossing, one invoice.
		const { subscription, instance } = await thresholdCustomer(20);
		const key = await sdkKey();
		const responses = await Promise.all(
			Array.from({ length: 40 }, () =>
				post("/v1/actions", { agent_key: instance, action_type: "call" }, { key }),
			),
		);
		expect(responses.map((response) => response.status)).toEqual(Array(40).fill(201));
		const [invoice] = await thresholdInvoices(subscription.id, 1);
		// The invoice bills what was counted when it was made: at least the crossing's $20, at most all $25.
		expect(invoice?.amount).toBeGreaterThanOrEqual(20);
		expect(invoice?.amount).toBeLessThanOrEqual(25);
		await new Promise((resolve) => setTimeout(resolve, 4000));
		const all = await invoicesOf(subscription.id);
		expect(all.filter((found) => found.kind === "threshold")).toHaveLength(1);
		expect(all.reduce((sum, found) => sum + found.amount, 0)).toBeLessThanOrEqual(25);
	});

	it("makes one invoice per crossing in successive bursts, never two for one", async () => {
		const { subscription, instance } = await thresholdCustomer(10);
		const key = await sdkKey();
		const burst = () =>
			Promise.all(
				Array.from({ length: 12 }, () =>
					post("/v1/actions", { agent_key: instance, action_type: "call" }, { key }),
				),
			);
		await burst();
		await thresholdInvoices(subscription.id, 1);
		// 12 calls billed ($11); 24 more are $12 more: the second crossing.
		await burst();
		await burst();
		const invoices = await thresholdInvoices(subscription.id, 2);
		await new Promise((resolve) => setTimeout(resolve, 3000));
		const all = (await invoicesOf(subscription.id)).filter((found) => found.kind === "threshold");
		expect(all).toHaveLength(2);
		// Together they bill the 36 calls exactly once: 10 × $1 + 26 × $0.50.
		expect(invoices.reduce((sum, found) => sum + found.amount, 0)).toBe(23);
	});
});
