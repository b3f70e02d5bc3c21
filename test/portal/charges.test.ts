import { describe, expect, it } from "vitest";
import { get, post } from "../helpers";
import { customer, sendActions } from "../invoicing/fixtures";
import { mint, portalGet } from "./fixtures";

// The portal names each charge as the invoice will (docs/portal.md): the plan's description, never a metric id.
describe("charge descriptions in the portal overview", () => {
	it("gives every charge of the period its description, and a readable name where the plan has none", async () => {
		const { account, instances } = await customer({
			base_fee: 10,
			charges: [
				{
					metric: "llm_calls",
					description: "LLM calls",
					source: { kind: "action", type: "llm_call", aggregate: "count" },
					model: "per_unit",
					unit_price: 0.01,
				},
				{
					metric: "tool_calls",
					source: { kind: "action", type: "tool_call", aggregate: "count" },
					model: "per_unit",
					unit_price: 0.02,
				},
			],
			minimum_amount: 50,
		});
		await sendActions([
			{ agent_key: instances[0] as string, action_type: "llm_call" },
			{ agent_key: instances[0] as string, action_type: "tool_call" },
		]);
		const { token } = await mint(account.id);
		const { status, body } = await portalGet("/overview", token);
		expect(status).toBe(200);
		const [subscription] = body.subscriptions;
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(subscription.charges).toEqual(usage.body.charges);
		expect(subscription.charges.map((c: { metric: string }) => c.metric)).toEqual([
			"base_fee",
			"llm_calls",
			"tool_calls",
			"minimum_commitment",
		]);
		expect(subscription.charge_descriptions).toEqual({
			base_fee: "Base fee",
			llm_calls: "LLM calls",
			tool_calls: "Tool calls",
			minimum_commitment: "Minimum commitment top-up",
		});
	});
});

// A subscription pinned to an earlier version is named as that version, not as the plan's latest (docs/portal.md).
describe("the plan name in the portal overview", () => {
	it("is the subscription's own version's", async () => {
		const { account, plan } = await customer({ name: "Growth", base_fee: 10, charges: [] });
		const version = await post(`/v1/pricing/rate-plans/${plan.id}/versions`, {
			name: "Growth 2027",
			currency: "USD",
			base_fee: 12,
			charges: [],
		});
		expect(version.status, JSON.stringify(version.body)).toBe(201);
		const { token } = await mint(account.id);
		const { body } = await portalGet("/overview", token);
		expect(body.subscriptions.map((s: { rate_plan_name: string }) => s.rate_plan_name)).toEqual(["Growth"]);
	});
});
