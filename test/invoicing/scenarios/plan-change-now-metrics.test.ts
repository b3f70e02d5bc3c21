/**
 * Scenario: a plan change "now" splits the quantities of charges the daily rows cannot answer — a `max`, a
 * `filter` and a `unique_count` — by part too (docs/plan-versions.md#changing-now): each part counts its own
 * events from zero, a value seen in both parts counts once in each.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { get, post } from "../../helpers";
import { customer, generateOne, linesOf, sendActions } from "../fixtures";

const PERIOD = "2026-09";
const at = (day: number, time = "12:00:00.000") => `${PERIOD}-${String(day).padStart(2, "0")}T${time}Z`;
const setClock = (iso: string) => vi.setSystemTime(new Date(iso));

/** A peak (max), a filtered count and a distinct count, at $`price` a unit. */
const meteredPlan = (price: number) => ({
	name: "Meter",
	currency: "USD",
	base_fee: 0,
	charges: [
		{
			metric: "peak",
			source: { kind: "action", type: "call", aggregate: "max", field: "agents" },
			model: "per_unit",
			unit_price: price,
		},
		{
			metric: "gpt",
			source: { kind: "action", type: "call", aggregate: "count", filter: { model: "gpt-4o" } },
			model: "per_unit",
			unit_price: price,
		},
		{
			metric: "users",
			source: { kind: "action", type: "call", aggregate: "unique_count", field: "user" },
			model: "per_unit",
			unit_price: price,
		},
	],
});

afterEach(() => {
	vi.useRealTimers();
});

describe("scenario: a plan change now with max, filtered and distinct quantities", () => {
	it("counts each part's quantities from zero, late events in the part they are timestamped in", async () => {
		vi.useFakeTimers({ toFake: ["Date"] });
		setClock(at(1, "00:00:00.000"));
		const { plan, account, subscription, instances } = await customer(meteredPlan(1));
		const agent = instances[0] as string;
		const v2 = await post(`/v1/pricing/rate-plans/${plan.id}/versions`, meteredPlan(2));
		expect(v2.status, JSON.stringify(v2.body)).toBe(201);
		const call = (day: number, agents: number, model: string, user: string) => ({
			agent_key: agent,
			action_type: "call",
			timestamp: at(day),
			metadata: { agents, model, user },
		});
		setClock(at(5, "13:00:00.000"));
		await sendActions([
			call(5, 7, "gpt-4o", "u1"),
			call(5, 3, "gpt-4o", "u2"),
			call(5, 2, "gpt-4o", "u3"),
			call(5, 1, "claude", "u1"),
		]);
		setClock(at(16, "00:00:00.000"));
		const changed = await post(`/v1/subscriptions/${subscription.id}/change-plan`, { version: 2, at: "now" });
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		setClock(at(20, "13:00:00.000"));
		await sendActions([call(20, 4, "gpt-4o", "u1"), call(20, 1, "gpt-4o", "u4"), call(20, 2, "other", "u4")]);
		// Late: timestamped in the first part, sent in the second; its user was already counted there.
		await sendActions([call(6, 9, "claude", "u2")]);
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${subscription.id}`);
		setClock("2026-10-01T00:10:00.000Z");
		const invoice = await generateOne(PERIOD, account.id);
		// Part 1 at $1: peak 9, 3 gpt-4o calls, 3 users; part 2 at $2: peak 4, 2 gpt-4o calls, 2 users (u1 again).
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 0],
			["peak", 9, 9],
			["gpt", 3, 3],
			["users", 3, 3],
			["base_fee", 1, 0],
			["peak", 4, 8],
			["gpt", 2, 4],
			["users", 2, 4],
		]);
		expect(invoice.amount).toBe(31);
		expect(upcoming.status, JSON.stringify(upcoming.body)).toBe(200);
		expect(linesOf(upcoming.body)).toEqual(linesOf(invoice));
		expect(usage.status, JSON.stringify(usage.body)).toBe(200);
		const charges = (usage.body.charges as { metric: string; quantity: number; amount: number }[]).map(
			(charge) => [charge.metric, charge.quantity, charge.amount],
		);
		expect(charges).toEqual(linesOf(invoice));
	});

	it("counts each part by its own plan's sources, and bills a late larger peak as a part's difference", async () => {
		vi.useFakeTimers({ toFake: ["Date"] });
		setClock(at(1, "00:00:00.000"));
		const modelPlan = (model: string, price: number) => ({
			name: "Models",
			currency: "USD",
			base_fee: 0,
			charges: [
				{
					metric: "model_calls",
					source: { kind: "action", type: "call", aggregate: "count", filter: { model } },
					model: "per_unit",
					unit_price: price,
				},
				{
					metric: "peak",
					source: { kind: "action", type: "call", aggregate: "max", field: "agents" },
					model: "per_unit",
					unit_price: price,
				},
			],
		});
		const { plan, account, subscription, instances } = await customer(modelPlan("gpt-4o", 1));
		const agent = instances[0] as string;
		const v2 = await post(`/v1/pricing/rate-plans/${plan.id}/versions`, modelPlan("claude", 2));
		expect(v2.status, JSON.stringify(v2.body)).toBe(201);
		const call = (day: number, model: string, agents: number) => ({
			agent_key: agent,
			action_type: "call",
			timestamp: at(day),
			metadata: { model, agents },
		});
		setClock(at(4, "13:00:00.000"));
		await sendActions([call(4, "gpt-4o", 2), call(4, "gpt-4o", 5), call(4, "claude", 1)]);
		setClock(at(11, "00:00:00.000"));
		const changed = await post(`/v1/subscriptions/${subscription.id}/change-plan`, { version: 2, at: "now" });
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		setClock(at(12, "13:00:00.000"));
		// The first plan's filter still counts a late event of its part; the second plan's counts its own part.
		await sendActions([call(12, "claude", 3), call(12, "gpt-4o", 1), call(8, "gpt-4o", 4)]);
		setClock("2026-10-01T00:10:00.000Z");
		const invoice = await generateOne(PERIOD, account.id);
		// Part 1 at $1: 3 gpt-4o calls, peak 5; part 2 at $2: 1 claude call, peak 3.
		expect(linesOf(invoice)).toEqual([
			["base_fee", 1, 0],
			["model_calls", 3, 3],
			["peak", 5, 5],
			["base_fee", 1, 0],
			["model_calls", 1, 2],
			["peak", 3, 6],
		]);
		// A later, larger peak of the first part: a supplementary invoice bills that part's difference only.
		await sendActions([call(9, "claude", 8)]);
		const late = await generateOne(PERIOD, account.id);
		expect(late.kind).toBe("supplementary");
		expect(linesOf(late)).toEqual([["peak", 3, 3]]);
	});
});
