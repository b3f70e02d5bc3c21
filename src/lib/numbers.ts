/**
 * The bounds of every numeric input (docs/conventions.md#numbers-in): finite, with an absolute value of at most 1e15; money takes at
 * most 12 decimal places. Large enough for any real price, quantity or amount, small enough that sums and products
 * of them stay finite and exact in decimal arithmetic, so no response ever carries a null or infinite number.
 * The zod pieces built on it are in schemas/numbers.ts; `isBoundedNumber` is the same rule for hand-written checks
 * (the metering fast path), so both refuse the same inputs.
 */
import { decimalPlaces } from "./money";

export const MAX_ABS_NUMBER = 1e15;
export const MAX_MONEY_DECIMALS = 12;

/** A finite number with |x| ≤ 1e15 (the one check also used outside zod). */
export function isBoundedNumber(value: unknown): value is number {
	return typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= MAX_ABS_NUMBER;
}

/** A money amount within the bounds, ≥ 0, with at most 12 decimal places (the one check also used outside zod). */
export function isMoneyAmount(value: unknown): value is number {
	return isBoundedNumber(value) && value >= 0 && decimalPlaces(value) <= MAX_MONEY_DECIMALS;
}
