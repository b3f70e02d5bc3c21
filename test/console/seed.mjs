// The data the console's browser tests look at, created through the public API as an operator would:
// two customers, each with an agent instance on a plan, and some usage (with costs) this month.

/**
 * Acme Corp, plan Pro: base fee 49 + 8 llm_call × 0.25 + 10 % of one converted_lead worth 100
 *   = 49 + 2.00 + 10.00 = 61.00; its 8 actions cost 8 × 0.05 = 0.40.
 * Globex, plan Starter: 5 tool_call × 0.10 = 0.50; cost 5 × 0.02 = 0.10.
 */
export const EXPECTED = { acmeInvoice: 61, globexInvoice: 0.5, acmeCosts: 0.4, globexCosts: 0.1 };

export async function seed(api) {
	const qualifier = await api("POST", "/agents", {
		name: "Lead qualifier",
		type: "langgraph",
		description: "Scores inbound leads",
	});
	const support = await api("POST", "/agents", { name: "Support bot", type: "crewai" });
	await api("POST", `/agents/${qualifier.id}/instances`, {
		key: "lead-qualifier-eu-1",
		name: "EU production",
	});
	await api("POST", `/agents/${support.id}/instances`, { key: "support-bot-1" });

	const acme = await api("POST", "/accounts", {
		name: "Acme Corp",
		email: "ap@acme.example",
		external_id: "crm-1001",
		billing_address: { city: "Berlin", country: "DE" },
	});
	const globex = await api("POST", "/accounts", { name: "Globex", email: "billing@globex.example" });

	const pro = await api("POST", "/pricing/rate-plans", {
		name: "Pro",
		currency: "USD",
		base_fee: 49,
		charges: [
			{
				metric: "llm_calls",
				source: { kind: "action", type: "llm_call", aggregate: "count" },
				model: "per_unit",
				unit_price: 0.25,
			},
			{
				metric: "lead_value",
				source: { kind: "outcome", type: "converted_lead", aggregate: "sum" },
				model: "percentage",
				percent: 10,
			},
		],
	});
	const starter = await api("POST", "/pricing/rate-plans", {
		name: "Starter",
		currency: "USD",
		charges: [
			{
				metric: "tool_calls",
				source: { kind: "action", type: "tool_call", aggregate: "count" },
				model: "per_unit",
				unit_price: 0.1,
			},
		],
	});

	const acmeSub = await api("POST", "/subscriptions", {
		account_id: acme.id,
		rate_plan_id: pro.id,
		agent_instance_ids: ["lead-qualifier-eu-1"],
	});
	const globexSub = await api("POST", "/subscriptions", {
		account_id: globex.id,
		rate_plan_id: starter.id,
		agent_instance_ids: ["support-bot-1"],
	});

	const llmCalls = Array.from({ length: 8 }, () => ({
		agent_key: "lead-qualifier-eu-1",
		action_type: "llm_call",
		metadata: { cost: 0.05, tokens: 1200 },
	}));
	const toolCalls = Array.from({ length: 5 }, () => ({
		agent_key: "support-bot-1",
		action_type: "tool_call",
		metadata: { cost: 0.02 },
	}));
	await api("POST", "/actions/batch", { events: [...llmCalls, ...toolCalls] });
	await api("POST", "/outcomes", {
		agent_key: "lead-qualifier-eu-1",
		outcome_type: "converted_lead",
		value: 100,
	});

	return { qualifier, support, acme, globex, pro, starter, acmeSub, globexSub };
}
