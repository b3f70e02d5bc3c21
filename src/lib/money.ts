/**
 * Currency rules, written once. Money is a JSON number in major units; every charge line is rounded half-up
 * (away from zero) to its currency's minor unit, and a total is the sum of its rounded lines.
 */
import { Decimal } from "./decimal";

const ZERO_DECIMAL_CURRENCIES = new Set(
	"BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF".split(" "),
);

const THREE_DECIMAL_CURRENCIES = new Set("BHD IQD JOD KWD LYD OMR TND".split(" "));

// Active ISO 4217 currency codes (circulating currencies; fund, metal and testing codes left out, except UYI,
// which some payment providers use). ANG stays while XCG replaces it.
const CURRENCY_CODES = new Set(
	(
		"AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD " +
		"CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD " +
		"GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT " +
		"LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR " +
		"NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP " +
		"STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYI UYU UZS VED VES VND VUV WST XAF " +
		"XCD XCG XOF XPF YER ZAR ZMW ZWG"
	).split(" "),
);

export const DEFAULT_CURRENCY = "USD";

/** A known ISO 4217 code, in upper case. */
export function isCurrencyCode(code: string): boolean {
	return CURRENCY_CODES.has(code);
}

/** Decimal places of the currency's minor unit: 2 unless the currency has none (JPY) or three (KWD). */
export function minorUnits(currency: string): number {
	if (ZERO_DECIMAL_CURRENCIES.has(currency)) return 0;
	if (THREE_DECIMAL_CURRENCIES.has(currency)) return 3;
	return 2;
}

/** The one rounding rule for money: half away from zero, to the currency's minor unit. */
export function roundMoney(amount: Decimal, currency: string): Decimal {
	return amount.roundHalfUp(minorUnits(currency));
}

/**
 * An amount already rounded in its own currency, in `to`: multiplied by the rate, or — for a rate of the reverse
 * pair (to → from) — divided by it exactly; rounded once, half-up, to `to`'s minor unit (docs/currencies.md).
 */
export function convertMoney(amount: Decimal, rate: Decimal, to: string, reverse: boolean): Decimal {
	return reverse ? amount.divRoundHalfUp(rate, minorUnits(to)) : roundMoney(amount.mul(rate), to);
}

/** How many decimal places a number has, written exactly (0.1 → 1, 1e-12 → 12, 1200 → 0). */
export function decimalPlaces(x: number | string | Decimal): number {
	return Decimal.from(x).scale;
}

/**
 * Whether an amount survives conversion to a JSON number exactly. A JSON number (a binary double) carries 15 to 17
 * significant digits, so a total of bounded inputs can outgrow it: 1e15 + 1e15 + 0.01 would be written 2e15. Every
 * amount of at most 15 significant digits is exact — up to 9,999,999,999,999.99 in a currency of 2 decimals,
 * 999,999,999,999.999 with 3 and 999,999,999,999,999 with none — and some larger ones are (2e15 is). Callers
 * refuse an amount that is not, rather than let it be rounded silently.
 */
export function isExactAsJsonNumber(amount: Decimal): boolean {
	return Decimal.from(amount.toNumber()).eq(amount);
}

/** Why an amount cannot be answered, in words a user can act on. */
export function inexactAmountMessage(what: string, amount: Decimal, currency: string): string {
	return (
		`${what} ${amount.toString()} ${currency} has more significant digits than a JSON number carries ` +
		"exactly (amounts of up to 15 significant digits are exact); it is not rounded silently."
	);
}
