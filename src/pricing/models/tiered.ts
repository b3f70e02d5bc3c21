/**
 * tiered (graduated): each unit is priced by the tier it falls in, like income-tax brackets, and every tier
 * entered adds its flat fee once. A tier is entered as soon as any billable quantity, even a fraction, falls in it;
 * a billable quantity of 0 enters no tier, so it costs nothing.
 */
import { Decimal } from "../../lib/decimal";
import type { TieredCharge } from "../charges";
import type { ModelResult, RatedTier } from "../rate";

export function rateTiered(charge: Pick<TieredCharge, "tiers">, billable: Decimal): ModelResult {
	let lowerBound = Decimal.ZERO;
	const tiers = charge.tiers.map((tier): RatedTier => {
		const upTo = tier.up_to === null ? null : Decimal.from(tier.up_to);
		const upperBound = upTo === null ? billable : Decimal.min(billable, upTo);
		const quantity = Decimal.max(Decimal.ZERO, upperBound.sub(lowerBound));
		const flatFee = Decimal.from(tier.flat_fee ?? 0);
		const amount = quantity.isZero()
			? Decimal.ZERO
			: quantity.mul(Decimal.from(tier.unit_price)).add(flatFee);
		if (upTo !== null) lowerBound = upTo;
		return { up_to: upTo, quantity, amount };
	});
	return { amount: Decimal.sum(tiers.map((tier) => tier.amount)), tiers };
}
