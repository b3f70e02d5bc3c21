/**
 * Applying a coupon to a subscription: a discount from the current billing period, for one period (once), N
 * periods (repeating) or every period (forever). A subscription has one discount at a time. The redemption is
 * one D1 batch: the coupon's count goes up only while it is still redeemable (active, not past redeem_by, under
 * max_redemptions) and the discount is inserted only while the subscription has none, so concurrent requests
 * never redeem a coupon past its limit or give a subscription two discounts; a refused batch stores nothing.
 */
import { auditInsert, created } from "../audit/record";
import { abortUnlessChanged, isAbortedByGuard, statement } from "../db/batch";
import { type ById, getInScope, type WithEnv } from "../db/rows";
import { subscriptionDiscounts } from "../db/schema";
import { markStatements, type WriteMark } from "../db/write-once";
import { conflict } from "../lib/errors";
import { newId } from "../lib/ids";
import { addPeriods, nowIso, periodOf } from "../lib/time";
import type { SubscriptionDiscountView } from "../subscriptions/views";
import { getSubscription } from "../subscriptions/views";
import { type CouponRow, couponByCode, getCouponRow } from "./coupons";

export type ApplyDiscountInput =
	| { coupon_id: string; code?: undefined }
	| { code: string; coupon_id?: undefined };

/** A discount as stored (the answer a repeat of its request gets, db/write-once.ts). */
export async function getDiscount({ db, scope, id }: ById): Promise<SubscriptionDiscountView> {
	const row = await getInScope(db, scope, subscriptionDiscounts, "discount", id);
	return {
		id: row.id,
		coupon_id: row.couponId,
		subscription_id: row.subscriptionId,
		start_period: row.startPeriod,
		end_period: row.endPeriod,
		created_at: row.createdAt,
	};
}

/** Why a coupon cannot be redeemed now (409), or nothing when it can. */
function refusal(coupon: CouponRow, now: string): string | null {
	if (coupon.status === "archived") return `Coupon ${coupon.code} is archived: it can no longer be redeemed.`;
	if (coupon.redeemBy !== null && coupon.redeemBy <= now) {
		return `Coupon ${coupon.code} expired at ${coupon.redeemBy}: it can no longer be redeemed.`;
	}
	if (coupon.maxRedemptions !== null && coupon.timesRedeemed >= coupon.maxRedemptions) {
		return `Coupon ${coupon.code} has been redeemed ${coupon.maxRedemptions} times, its maximum.`;
	}
	return null;
}

function lastPeriod(coupon: CouponRow, start: string): string | null {
	if (coupon.duration === "once") return start;
	if (coupon.duration === "repeating") return addPeriods(start, (coupon.durationInPeriods ?? 1) - 1);
	return null;
}

export async function applyDiscount({
	env,
	db,
	scope,
	subscriptionId,
	input,
	mark,
}: WithEnv & {
	subscriptionId: string;
	input: ApplyDiscountInput;
	mark?: WriteMark;
}): Promise<SubscriptionDiscountView> {
	const subscription = await getSubscription({ db, scope, id: subscriptionId });
	const coupon =
		input.coupon_id !== undefined
			? await getCouponRow({ db, scope, id: input.coupon_id })
			: await couponByCode({ db, scope, code: input.code as string });
	const now = nowIso();
	const period = periodOf(now);
	if (subscription.status === "cancelled") {
		throw conflict(`Subscription ${subscriptionId} is cancelled: it cannot take a discount.`);
	}
	const why = refusal(coupon, now);
	if (why) throw conflict(why);
	// An amount off counts in the currency the invoices are in: the billing currency, not the plan's (§35).
	if (coupon.amountOff !== null && coupon.currency !== subscription.billing_currency) {
		throw conflict(
			`Coupon ${coupon.code} takes ${coupon.currency} off, but subscription ${subscriptionId} is billed in ${subscription.billing_currency}.`,
		);
	}
	if (subscription.discount !== null) {
		throw conflict(
			`Subscription ${subscriptionId} already has a discount (${subscription.discount.id}); it takes one at a time.`,
		);
	}

	const discount: SubscriptionDiscountView = {
		id: newId("dsc"),
		coupon_id: coupon.id,
		subscription_id: subscriptionId,
		start_period: period,
		end_period: lastPeriod(coupon, period),
		created_at: now,
	};
	const d1 = env.DB;
	try {
		await d1.batch([
			statement(
				d1,
				`UPDATE coupons SET times_redeemed = times_redeemed + 1
				WHERE environment = ?1 AND id = ?2 AND status = 'active'
				AND (redeem_by IS NULL OR redeem_by > ?3)
				AND (max_redemptions IS NULL OR times_redeemed < max_redemptions)`,
				scope.environment,
				coupon.id,
				now,
			),
			abortUnlessChanged(d1),
			statement(
				d1,
				`INSERT INTO subscription_discounts
				(id, environment, subscription_id, coupon_id, start_period, end_period, created_at)
				SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE NOT EXISTS (
					SELECT 1 FROM subscription_discounts
					WHERE subscription_id = ?3 AND (end_period IS NULL OR end_period >= ?5))`,
				discount.id,
				scope.environment,
				subscriptionId,
				coupon.id,
				discount.start_period,
				discount.end_period,
				now,
			),
			abortUnlessChanged(d1),
			auditInsert(d1, scope, {
				action: "discount.created",
				resourceId: discount.id,
				changes: created({
					coupon_id: coupon.id,
					subscription_id: subscriptionId,
					start_period: discount.start_period,
					end_period: discount.end_period,
				}),
			}),
			...markStatements(mark, d1, [discount.id]),
		]);
	} catch (error) {
		if (!isAbortedByGuard(error)) throw error;
		// Another request came first: say what it changed, from a fresh read.
		const fresh = await getCouponRow({ db, scope, id: coupon.id });
		throw conflict(
			refusal(fresh, now) ?? `Subscription ${subscriptionId} already has a discount; it takes one at a time.`,
		);
	}
	return discount;
}
