/** per_unit: every billable unit at the same price. */
import { Decimal } from "../../lib/decimal";
import type { PerUnitCharge } from "../charges";
import type { ModelResult } from "../rate";

export function ratePerUnit(charge: Pick<PerUnitCharge, "unit_price">, billable: Decimal): ModelResult {
	return { amount: billable.mul(Decimal.from(charge.unit_price)) };
}
