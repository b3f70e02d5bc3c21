/**
 * volume: the whole billable quantity is priced by the one tier it falls in, plus that tier's flat fee.
 * A quantity equal to a tier's up_to belongs to that tier; a billable quantity of 0 costs nothing (no flat fee).
 * Every tier is listed so the breakdown has the same shape as graduated pricing; only the applied one is non-zero.
 */
import { Decimal } from "../../lib/decimal";
import type { VolumeCharge } from "../charges";
import type { ModelResult, RatedTier } from "../rate";

export function rateVolume(charge: Pick<VolumeCharge, "tiers">, billable: Decimal): ModelResult {
	const appliedIndex = billable.isZero()
		? -1
		: charge.tiers.findIndex((tier) => tier.up_to === null || billable.lte(Decimal.from(tier.up_to)));
	const tiers = charge.tiers.map((tier, index): RatedTier => {
		const upTo = tier.up_to === null ? null : Decimal.from(tier.up_to);
		if (index !== appliedIndex) return { up_to: upTo, quantity: Decimal.ZERO, amount: Decimal.ZERO };
		const amount = billable.mul(Decimal.from(tier.unit_price)).add(Decimal.from(tier.flat_fee ?? 0));
		return { up_to: upTo, quantity: billable, amount };
	});
	const applied = tiers[appliedIndex];
	return { amount: applied ? applied.amount : Decimal.ZERO, tiers };
}
