/**
 * The exchange rates a subscription's head compares its amounts in (docs/currencies.md): when the plan of a
 * period is priced in another currency than the subscription's billing currency, alert thresholds on the total,
 * budgets and the invoicing threshold count in the billing currency, so the period's plan-currency amounts are
 * converted at the rate in effect now — the pair, else its reverse divided exactly — and rounded per line, as
 * invoices and GET /v1/usage convert them.
 *
 * The conversion of a pair is read from D1 at most once per RATES_REFRESH_MS — never per event — and at once when
 * the API says a rate of the pair was added (exchangeRatesChanged). With no rate in effect the checks that need
 * one wait: nothing is triggered, held against a budget or invoiced for a threshold, and the first evaluation
 * once a rate exists sees the whole period so far.
 */
import type { Environment } from "../../../env";
import { Decimal } from "../../../lib/decimal";
import { convertMoney } from "../../../lib/money";

/** How long a pair's conversion read from D1 is used before it is read again. */
export const RATES_REFRESH_MS = 30_000;

/** The stored rate that converts `from` → `to` now, exact, and whether it is the reverse pair's. */
export interface HeldConversion {
	from: string;
	to: string;
	rate: string;
	reverse: boolean;
}

/** The currency a period's amounts are compared in, and how its plan's amounts convert to it (null: they need not). */
export interface Billing {
	currency: string;
	conversion: HeldConversion | null;
}

/** A plan-currency amount in the billing currency (unchanged without a conversion). */
export function inBilling(amount: Decimal, conversion: HeldConversion | null): Decimal {
	if (conversion === null) return amount;
	return convertMoney(amount, Decimal.from(conversion.rate), conversion.to, conversion.reverse);
}

type Held = { conversion: HeldConversion | null; readAt: number };

export class RateBook {
	private readonly held = new Map<string, Held>();

	constructor(private readonly refreshMs = RATES_REFRESH_MS) {}

	/** Reads the pair's conversion in effect now when the one held is older than the refresh interval. */
	async refresh(d1: D1Database, environment: Environment, from: string, to: string, now = Date.now()) {
		if (from === to) return;
		const key = `${from} ${to}`;
		const known = this.held.get(key);
		if (known !== undefined && now - known.readAt < this.refreshMs) return;
		try {
			// The pair's latest rate in effect, else its reverse's (exchange-rates/convert.ts: conversionAt).
			const row = await d1
				.prepare(
					`SELECT base, rate FROM exchange_rates
					WHERE environment = ?1 AND effective_at <= ?4
						AND ((base = ?2 AND quote = ?3) OR (base = ?3 AND quote = ?2))
					ORDER BY base = ?2 DESC, effective_at DESC, id DESC LIMIT 1`,
				)
				.bind(environment, from, to, new Date(now).toISOString())
				.first<{ base: string; rate: string }>();
			const conversion = row ? { from, to, rate: row.rate, reverse: row.base !== from } : null;
			this.held.set(key, { conversion, readAt: now });
		} catch (error) {
			// What is held serves until a read succeeds; nothing is refused for it.
			console.error(JSON.stringify({ at: "usage-accumulator.rates", error: String(error) }));
		}
	}

	/** How `from` amounts count in `to` now; null while no rate is known to be in effect. */
	billing(from: string, to: string): Billing | null {
		if (from === to) return { currency: to, conversion: null };
		const conversion = this.held.get(`${from} ${to}`)?.conversion ?? null;
		return conversion === null ? null : { currency: to, conversion };
	}

	/** A rate was added: the next refresh reads every pair again. */
	expire(): void {
		for (const held of this.held.values()) held.readAt = Number.NEGATIVE_INFINITY;
	}
}
