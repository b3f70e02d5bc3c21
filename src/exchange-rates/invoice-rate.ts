/** The exchange rate an invoice keeps (docs/currencies.md): stored as exact text, shown as created. */
import type { StoredExchangeRate } from "../db/schema";
import { Decimal } from "../lib/decimal";
import type { ExchangeRate } from "./rates";

export function storedRate(rate: ExchangeRate | null): StoredExchangeRate | null {
	if (rate === null) return null;
	return {
		id: rate.id,
		base: rate.base,
		quote: rate.quote,
		rate: rate.rate.toString(),
		effective_at: rate.effective_at,
	};
}

/** `exchange_rate` of an invoice view: `{base, quote, rate, effective_at}`, or null without conversion. */
export function invoiceRateJson(rate: StoredExchangeRate | null | undefined) {
	if (rate === null || rate === undefined) return null;
	return {
		base: rate.base,
		quote: rate.quote,
		rate: Decimal.from(rate.rate).toNumber(),
		effective_at: rate.effective_at,
	};
}
