/**
 * The bounds of every numeric input (CONTRACT §1): finite, with an absolute value of at most 1e15; money takes at
 * most 12 decimal places. Large enough for any real price, quantity or amount, small enough that sums and products
 * of them stay finite and exact in decimal arithmetic, so no response ever carries a null or infinite number.
 * The zod pieces are for schemas; `isBoundedNumber` is the same rule for hand-written checks (the metering fast
 * path), so both refuse the same inputs.
 */
import { z } from "@hono/zod-openapi";
import { decimalPlaces } from "./money";

export const MAX_ABS_NUMBER = 1e15;
export const MAX_MONEY_DECIMALS = 12;

const OUT_OF_RANGE = "must be a finite number between -1e15 and 1e15";

/** A finite number with |x| ≤ 1e15 (the one check also used outside zod). */
export function isBoundedNumber(value: unknown): value is number {
	return typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= MAX_ABS_NUMBER;
}

/** A money amount within the bounds, ≥ 0, with at most 12 decimal places (the one check also used outside zod). */
export function isMoneyAmount(value: unknown): value is number {
	return isBoundedNumber(value) && value >= 0 && decimalPlaces(value) <= MAX_MONEY_DECIMALS;
}

/** A number input: finite, |x| ≤ 1e15. Chain `.min(0)`, `.int()`… for narrower ranges. */
export const boundedNumber = (message: string = OUT_OF_RANGE) =>
	z.number(message).min(-MAX_ABS_NUMBER, message).max(MAX_ABS_NUMBER, message);

/**
 * A number with at most 12 decimal places on top of the bounds, ≥ `min` (0 by default): every money input (prices,
 * amounts), and sizes that divide (a package size of 5e-324 would multiply a quantity past any bound).
 */
export const decimalInput = ({ min = 0 }: { min?: number } = {}) =>
	boundedNumber()
		.min(min, min === 0 ? "must be ≥ 0" : `must be ≥ ${min}`)
		.refine((n) => decimalPlaces(n) <= MAX_MONEY_DECIMALS, {
			message: `must have at most ${MAX_MONEY_DECIMALS} decimal places`,
		});

/** A money input (a price or an amount). */
export const moneyInput = decimalInput;
