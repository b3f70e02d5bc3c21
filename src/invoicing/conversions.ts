/**
 * Which periods' states can be invoiced now in their billing currency (docs/currencies.md): a state whose plan
 * is priced in another currency gets the conversion in effect at `at`; without one it is refused, naming the pair.
 */
import type { Db } from "../db/client";
import type { Scope } from "../db/scope";
import { type Conversion, conversionAt } from "../exchange-rates/convert";
import type { SubscriptionPeriodState } from "./computed";

export interface RefusedState {
	state: SubscriptionPeriodState;
	from: string;
	to: string;
}

export async function withConversions(
	db: Db,
	scope: Scope,
	states: readonly SubscriptionPeriodState[],
	at: string,
): Promise<{ ready: SubscriptionPeriodState[]; refused: RefusedState[] }> {
	const found = new Map<string, Conversion | null>();
	const ready: SubscriptionPeriodState[] = [];
	const refused: RefusedState[] = [];
	for (const state of states) {
		const from = state.plan.currency;
		const to = state.billingCurrency ?? from;
		if (from === to) {
			ready.push({ ...state, conversion: null });
			continue;
		}
		const pair = `${from} ${to}`;
		if (!found.has(pair)) found.set(pair, await conversionAt(db, scope, from, to, at));
		const conversion = found.get(pair) ?? null;
		if (conversion === null) refused.push({ state, from, to });
		else ready.push({ ...state, conversion });
	}
	return { ready, refused };
}
