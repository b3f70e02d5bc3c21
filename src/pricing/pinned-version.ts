/**
 * A plan row priced as one of its versions (docs/plan-versions.md). Apart from plan-versions.ts so that what
 * rates a period (billing-period, invoicing) does not load the plan routes' modules.
 */
import type { ratePlanVersions } from "../db/schema";
import type { RatePlanRow } from "./rate-plans";

type VersionRow = typeof ratePlanVersions.$inferSelect;

/** The plan row with the prices of a version (JSON text of pinnedVersion); the row itself when null. */
export function atVersion(plan: RatePlanRow, version: string | null | undefined): RatePlanRow {
	if (!version) return plan;
	const v = JSON.parse(version) as {
		version: number;
		name: string;
		description: string | null;
		base_fee: string;
		minimum_amount: string;
		prorate: number;
		charges: string;
	};
	return {
		...plan,
		version: v.version,
		name: v.name,
		description: v.description,
		baseFee: v.base_fee,
		minimumAmount: v.minimum_amount,
		prorate: v.prorate === 1,
		charges: JSON.parse(v.charges) as unknown[],
	};
}

/** A version's stored row from the prices of a plan row (the row a plan create writes as version 1). */
export function versionRowOf(row: RatePlanRow, version: number): VersionRow {
	return {
		ratePlanId: row.id,
		environment: row.environment,
		version,
		name: row.name,
		description: row.description,
		currency: row.currency,
		baseFee: row.baseFee,
		minimumAmount: row.minimumAmount,
		prorate: row.prorate,
		charges: row.charges,
		createdAt: row.createdAt,
	};
}

/** The plan row with the prices of a stored version row. */
export function atVersionRow(plan: RatePlanRow, row: VersionRow): RatePlanRow {
	return {
		...plan,
		version: row.version,
		name: row.name,
		description: row.description,
		baseFee: row.baseFee,
		minimumAmount: row.minimumAmount,
		prorate: row.prorate,
		charges: row.charges,
	};
}
