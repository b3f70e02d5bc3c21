/** Builders for conversion tests: a plan in one currency, an account billed in another, and their rates. */
import { expect } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { createAccount, post } from "../helpers";
import { createPlan, instanceKey } from "../invoicing/fixtures";

/** tokens at 0.0013 each, a base fee of 10 (in the plan's currency). */
export const tokenCharges = [
	{
		metric: "tokens",
		source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
		model: "per_unit",
		unit_price: 0.0013,
	},
];

export async function addRate(base: string, quote: string, rate: number, effective_at?: string) {
	const response = await post("/v1/exchange-rates", { base, quote, rate, effective_at });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; base: string; quote: string; rate: number; effective_at: string };
}

/** An account in `billing`, subscribed to a plan priced in `planCurrency`; billing_currency left to its default. */
export async function foreignCustomer(
	planCurrency: string,
	billing: string,
	plan: Record<string, unknown> = {},
	subscription: Record<string, unknown> = {},
	accountFields: Record<string, unknown> = {},
) {
	const ratePlan = await createPlan({ currency: planCurrency, base_fee: 10, charges: tokenCharges, ...plan });
	const account = await createAccount(undefined, { currency: billing, ...accountFields });
	const instance = instanceKey();
	const made = await post("/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: ratePlan.id,
		agent_instance_ids: [instance],
		...subscription,
	});
	expect(made.status, JSON.stringify(made.body)).toBe(201);
	return {
		plan: ratePlan,
		account,
		instance,
		subscription: made.body as { id: string; billing_currency: string },
	};
}

/** A hand computation: amount × rate, rounded half-up to `places`, as a number. */
export const times = (amount: string, rate: string, places: number) =>
	Decimal.from(amount).mul(Decimal.from(rate)).roundHalfUp(places).toNumber();
/** amount ÷ rate exactly, rounded half-up once to `places`. */
export const over = (amount: string, rate: string, places: number) =>
	Decimal.from(amount).divRoundHalfUp(Decimal.from(rate), places).toNumber();
