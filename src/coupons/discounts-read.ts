/** The coupon that discounts one period of one subscription, read for real-time totals (metering/usage.ts). */
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { subscriptions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { discountInEffect, type PeriodDiscount, parseDiscount } from "../pricing/period-discount";

export async function periodDiscountOf(
	db: Db,
	scope: Scope,
	subscriptionId: string,
	period: string,
): Promise<PeriodDiscount | null> {
	const [row] = await db
		.select({ discount: discountInEffect(period) })
		.from(subscriptions)
		.where(inScope(scope, subscriptions, eq(subscriptions.id, subscriptionId)));
	return parseDiscount(row?.discount);
}
