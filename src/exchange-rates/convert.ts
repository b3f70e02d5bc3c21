/**
 * Converting money between currencies: an amount already rounded in its own currency is multiplied by the pair's
 * rate, or — when only the reverse pair is stored — divided by the reverse rate exactly, and rounded once, half-up,
 * to the target currency's minor unit (docs/currencies.md).
 */
import type { Db } from "../db/client";
import type { Scope } from "../db/scope";
import type { Decimal } from "../lib/decimal";
import { DomainError } from "../lib/errors";
import { convertMoney } from "../lib/money";
import { type ExchangeRate, rateInEffect } from "./rates";

/** The stored rate that converts `from` → `to`, and whether it is the reverse pair (to → from). */
export interface Conversion {
	from: string;
	to: string;
	rate: ExchangeRate;
	reverse: boolean;
}

/** The conversion in effect at `at`: the pair itself, else its reverse; null when neither has a rate then. */
export async function conversionAt(
	db: Db,
	scope: Scope,
	from: string,
	to: string,
	at: string,
): Promise<Conversion | null> {
	const direct = await rateInEffect(db, scope, { base: from, quote: to }, at);
	if (direct !== null) return { from, to, rate: direct, reverse: false };
	const reverse = await rateInEffect(db, scope, { base: to, quote: from }, at);
	return reverse === null ? null : { from, to, rate: reverse, reverse: true };
}

/** An amount of `conversion.from` in `conversion.to`, rounded half-up once to the target's minor unit. */
export function convertAmount(amount: Decimal, conversion: Conversion): Decimal {
	return convertMoney(amount, conversion.rate.rate, conversion.to, conversion.reverse);
}

/** "no USD→GBP exchange rate in effect" */
export const missingRateMessage = (from: string, to: string) => `no ${from}→${to} exchange rate in effect`;

/** The 409 of a conversion that has no rate in effect, naming the pair(s). */
export function missingRate(pairs: readonly { from: string; to: string }[]): DomainError {
	const names = [...new Set(pairs.map((p) => missingRateMessage(p.from, p.to)))];
	return new DomainError(
		"conflict",
		`${names.join("; ")}: add one with POST /v1/exchange-rates (either direction) to convert.`,
	);
}

/** The conversion in effect at `at`, or the 409 naming the pair. */
export async function requireConversion(
	db: Db,
	scope: Scope,
	from: string,
	to: string,
	at: string,
): Promise<Conversion> {
	const conversion = await conversionAt(db, scope, from, to, at);
	if (conversion === null) throw missingRate([{ from, to }]);
	return conversion;
}
