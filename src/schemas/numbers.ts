/** The zod schemas of numeric inputs: the bounds of lib/numbers.ts, with the messages a client reads. */
import { z } from "@hono/zod-openapi";
import { decimalPlaces } from "../lib/money";
import { MAX_ABS_NUMBER, MAX_MONEY_DECIMALS } from "../lib/numbers";

const OUT_OF_RANGE = "must be a finite number between -1e15 and 1e15";

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
