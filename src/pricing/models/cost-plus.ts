/**
 * cost_plus: what the usage cost the operator, with a markup on top (model cost + 25 %). The billable quantity
 * is an amount of cost in the plan's currency, so included_quantity is cost given away before the markup.
 */
import { Decimal } from "../../lib/decimal";
import type { CostPlusCharge } from "../charges";
import type { ModelResult } from "../rate";

const HUNDRED_PERCENT = Decimal.from(100);

export function rateCostPlus(charge: Pick<CostPlusCharge, "markup_percent">, billable: Decimal): ModelResult {
	// billable × (1 + markup / 100), exact: the one rounding is the charge line's.
	return { amount: billable.mulPercent(HUNDRED_PERCENT.add(Decimal.from(charge.markup_percent))) };
}
