/** percentage: a share of the summed outcome values (e.g. 10% of the value an agent delivered). */
import { Decimal } from "../../lib/decimal";
import type { PercentageCharge } from "../charges";
import type { ModelResult } from "../rate";

export function ratePercentage(charge: Pick<PercentageCharge, "percent">, billable: Decimal): ModelResult {
	return { amount: billable.mulPercent(Decimal.from(charge.percent)) };
}
