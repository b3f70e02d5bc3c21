/**
 * Coupons: a percentage or an amount off, for one, several or every billing period of the subscriptions they
 * are applied to (docs/discounts.md). A coupon never changes once created except its redemption count and its
 * archiving; archiving stops new redemptions while discounts already applied go on.
 */
import { eq } from "drizzle-orm";
import { created } from "../audit/record";
import { updateAudited, writeAudited } from "../audit/write";
import { isUniqueViolation } from "../db/client";
import { newestFirst } from "../db/pages";
import { type ById, getInScope, type InScope, type Page } from "../db/rows";
import { coupons } from "../db/schema";
import { inScope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { conflict, DomainError } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export type CouponDuration = "once" | "repeating" | "forever";

export interface CreateCouponInput {
	code: string;
	name?: string | null;
	percent_off?: number;
	amount_off?: number;
	currency?: string;
	duration: CouponDuration;
	duration_in_periods?: number;
	max_redemptions?: number;
	redeem_by?: string;
}

export interface CouponView {
	id: string;
	code: string;
	name: string | null;
	percent_off: number | null;
	amount_off: number | null;
	currency: string | null;
	duration: CouponDuration;
	duration_in_periods: number | null;
	max_redemptions: number | null;
	redeem_by: string | null;
	times_redeemed: number;
	status: "active" | "archived";
	created_at: string;
}

export type CouponRow = typeof coupons.$inferSelect;

export function couponView(row: CouponRow): CouponView {
	return {
		id: row.id,
		code: row.code,
		name: row.name,
		percent_off: row.percentOff === null ? null : Decimal.from(row.percentOff).toNumber(),
		amount_off: row.amountOff === null ? null : Decimal.from(row.amountOff).toNumber(),
		currency: row.currency,
		duration: row.duration,
		duration_in_periods: row.durationInPeriods,
		max_redemptions: row.maxRedemptions,
		redeem_by: row.redeemBy,
		times_redeemed: row.timesRedeemed,
		status: row.status,
		created_at: row.createdAt,
	};
}

/** `input` is checked by the route (one of percent_off and amount_off, currency with amount_off only…). */
export async function createCoupon({ db, scope, input }: InScope & { input: CreateCouponInput }) {
	const row: CouponRow = {
		id: newId("cpn"),
		environment: scope.environment,
		code: input.code,
		name: input.name ?? null,
		percentOff: input.percent_off === undefined ? null : Decimal.from(input.percent_off).toString(),
		amountOff: input.amount_off === undefined ? null : Decimal.from(input.amount_off).toString(),
		currency: input.amount_off === undefined ? null : (input.currency ?? null),
		duration: input.duration,
		durationInPeriods: input.duration === "repeating" ? (input.duration_in_periods ?? null) : null,
		maxRedemptions: input.max_redemptions ?? null,
		redeemBy: input.redeem_by === undefined ? null : new Date(input.redeem_by).toISOString(),
		timesRedeemed: 0,
		status: "active",
		createdAt: nowIso(),
	};
	try {
		const view = couponView(row);
		const { id: _id, created_at: _at, ...fields } = view;
		await writeAudited(db, scope, [db.insert(coupons).values(row)], {
			action: "coupon.created",
			resourceId: row.id,
			changes: created(fields),
		});
	} catch (error) {
		if (isUniqueViolation(error)) {
			throw conflict(`A coupon with code '${input.code}' already exists in this environment.`);
		}
		throw error;
	}
	return couponView(row);
}

export async function getCouponRow({ db, scope, id }: ById): Promise<CouponRow> {
	return getInScope(db, scope, coupons, "coupon", id);
}

export async function getCoupon(args: ById): Promise<CouponView> {
	return couponView(await getCouponRow(args));
}

export async function couponByCode({ db, scope, code }: InScope & { code: string }): Promise<CouponRow> {
	const [row] = await db
		.select()
		.from(coupons)
		.where(inScope(scope, coupons, eq(coupons.code, code)));
	if (!row) throw new DomainError("not_found", `No coupon with code '${code}'.`);
	return row;
}

export async function listCoupons({ db, scope, limit, offset }: InScope & Page) {
	const { rows, total } = await newestFirst(db, coupons, inScope(scope, coupons), { limit, offset });
	return { items: rows.map(couponView), total };
}

/** Idempotent: archiving an archived coupon answers it again, unchanged. */
export async function archiveCoupon({ db, scope, id }: ById): Promise<CouponView> {
	const row = await getCouponRow({ db, scope, id });
	if (row.status === "archived") return couponView(row);
	return couponView(
		await updateAudited(db, scope, coupons, "coupon", id, { status: "archived" }, "coupon.archived"),
	);
}
