import { describe, expect, it } from "vitest";
import {
	type AgentUsage,
	type BilledLine,
	computeInvoice,
	type SubscriptionPeriodState,
} from "../../src/invoicing/computed";
import type { RatePlanRow } from "../../src/pricing/rate-plans";

// The pure core of generation: what a subscription owes for a period, given its usage and earlier invoices.
const plan: RatePlanRow = {
	id: "plan_1",
	environment: "live",
	name: "Plan",
	description: null,
	currency: "USD",
	baseFee: "30",
	minimumAmount: "0",
	charges: [
		{
			metric: "tokens",
			description: "LLM tokens",
			source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
			model: "volume",
			included_quantity: 100,
			tiers: [
				{ up_to: 1000, unit_price: 0.01 },
				{ up_to: null, unit_price: 0.005 },
			],
		},
		{
			metric: "calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.1,
		},
	],
	status: "active",
	createdAt: "2026-01-01T00:00:00.000Z",
	prorate: false,
};

function tokens(agentId: string | null, count: number, sum: string): AgentUsage[] {
	return [
		{ agentId, kind: "action", type: "llm_call", field: "", count, sum: "0" },
		{ agentId, kind: "action", type: "llm_call", field: "tokens", count, sum },
	];
}

function state(overrides: Partial<SubscriptionPeriodState> = {}): SubscriptionPeriodState {
	return {
		subscriptionId: "sub_1",
		accountId: "acct_1",
		plan,
		usage: [],
		sequences: [],
		billedLines: [],
		invoiced: false,
		...overrides,
	};
}

const summary = (draft: ReturnType<typeof computeInvoice>) =>
	draft && {
		kind: draft.kind,
		sequence: draft.sequence,
		amount: draft.amount.toString(),
		lines: draft.lines.map((l) => [l.metric, l.quantity.toString(), l.amount.toString(), l.agentShares]),
	};

describe("computeInvoice", () => {
	it("drafts a regular invoice with every line and the agents' shares", () => {
		const usage = [...tokens("agt_a", 3, "700"), ...tokens(null, 2, "200.5")];
		// tokens 900.5, 100 free → 800.5 billable, volume tier ≤ 1000 → 800.5 × 0.01 = 8.005 → 8.01 (half up)
		// calls 5 × 0.10 = 0.50; base fee 30 → 38.51
		expect(summary(computeInvoice(state({ usage })))).toEqual({
			kind: "regular",
			sequence: 1,
			amount: "38.51",
			lines: [
				["base_fee", "1", "30", null],
				[
					"tokens",
					"900.5",
					"8.01",
					[
						{ agent_id: "agt_a", quantity: "700" },
						{ agent_id: null, quantity: "200.5" },
					],
				],
				[
					"calls",
					"5",
					"0.5",
					[
						{ agent_id: "agt_a", quantity: "3" },
						{ agent_id: null, quantity: "2" },
					],
				],
			],
		});
	});

	it("drafts nothing more when the usage is what was billed", () => {
		const usage = tokens("agt_a", 5, "900.5");
		const regular = computeInvoice(state({ usage }));
		const billedLines: BilledLine[] = (regular?.lines ?? []).map((l) => ({
			metric: l.metric,
			quantity: l.quantity.toString(),
			amount: l.amount.toString(),
			agentShares: l.agentShares,
		}));
		expect(computeInvoice(state({ usage, invoiced: true, sequences: [1], billedLines }))).toBeNull();
	});

	it("bills the difference of a re-rating, which for volume pricing reprices every unit", () => {
		const billedLines: BilledLine[] = [
			{ metric: "base_fee", quantity: "1", amount: "30", agentShares: null },
			{
				metric: "tokens",
				quantity: "900",
				amount: "8",
				agentShares: [{ agent_id: "agt_a", quantity: "900" }],
			},
			{ metric: "calls", quantity: "5", amount: "0.5", agentShares: [{ agent_id: "agt_a", quantity: "5" }] },
		];
		const usage = [...tokens("agt_a", 5, "900"), ...tokens("agt_b", 0, "1300")];
		// tokens now 2,200, 100 free → 2,100 billable, all in the second volume tier: 2,100 × 0.005 = 10.50
		// billed 8.00 → +2.50 for 1,300 more tokens; calls and base fee unchanged (count 0 for agt_b)
		expect(summary(computeInvoice(state({ usage, invoiced: true, sequences: [1], billedLines })))).toEqual({
			kind: "supplementary",
			sequence: 2,
			amount: "2.5",
			lines: [["tokens", "1300", "2.5", [{ agent_id: "agt_b", quantity: "1300" }]]],
		});
	});

	it("drafts no supplementary invoice when more units change no amount (inside the included quantity)", () => {
		const billedLines: BilledLine[] = [
			{ metric: "base_fee", quantity: "1", amount: "30", agentShares: null },
			{ metric: "tokens", quantity: "40", amount: "0", agentShares: [{ agent_id: "agt_a", quantity: "40" }] },
			{ metric: "calls", quantity: "0", amount: "0", agentShares: [] },
		];
		// tokens 40 → 90, still inside the 100 included: 0; calls stay 0 (the rows count 0 calls).
		const usage = tokens("agt_a", 0, "90");
		expect(computeInvoice(state({ usage, invoiced: true, sequences: [1], billedLines }))).toBeNull();
	});

	it("words a supplementary line by whether the period was open at its first invoice", () => {
		const billedLines: BilledLine[] = [
			{ metric: "base_fee", quantity: "1", amount: "30", agentShares: null },
			{ metric: "calls", quantity: "1", amount: "0.1", agentShares: null },
		];
		const usage = tokens("agt_a", 3, "0");
		const describe = (invoicedWhileOpen: boolean) =>
			computeInvoice(
				state({ usage, invoiced: true, sequences: [1], billedLines, invoicedWhileOpen }),
			)?.lines.map((line) => line.description);
		expect(describe(true)).toEqual(["calls — usage since the previous invoice: 2 units (3 in total)"]);
		expect(describe(false)).toEqual(["calls — late usage: 2 units (3 in total)"]);
	});

	it("numbers the next invoice after every earlier one, void ones included", () => {
		const draft = computeInvoice(state({ sequences: [1, 2], invoiced: false }));
		expect(draft).toMatchObject({ kind: "regular", sequence: 3 });
	});

	it("falls back to the whole period's shares when an instance moved to another agent", () => {
		const billedLines: BilledLine[] = [
			{ metric: "calls", quantity: "5", amount: "0.5", agentShares: [{ agent_id: "agt_a", quantity: "5" }] },
		];
		// The 5 billed calls now belong to agt_b, plus 1 new: agt_a's part would be −5.
		const usage = [
			{ agentId: "agt_b", kind: "action" as const, type: "llm_call", field: "", count: 6, sum: "0" },
		];
		const draft = computeInvoice(state({ usage, invoiced: true, sequences: [1], billedLines }));
		const calls = draft?.lines.find((l) => l.metric === "calls");
		expect(calls?.agentShares).toEqual([{ agent_id: "agt_b", quantity: "6" }]);
		expect(calls?.amount.toString()).toBe("0.1");
	});
});
