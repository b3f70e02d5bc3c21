/**
 * Versions of a rate plan (docs/plan-versions.md). A version never changes once written: a new price is a new
 * version of the same plan (same id, version + 1), kept in rate_plan_versions beside every earlier one, while
 * the rate_plans row shows the latest. Subscriptions name the version that rates them, so existing ones keep
 * their prices (grandfathered) until they are moved by a change of plan or a migration.
 */
import { and, eq, sql } from "drizzle-orm";
import { created } from "../audit/record";
import { writeAudited } from "../audit/write";
import type { Db } from "../db/client";
import { isUniqueViolation } from "../db/client";
import type { ById } from "../db/rows";
import { ratePlans, ratePlanVersions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { conflict, notFound } from "../lib/errors";
import { nowIso, periodOf } from "../lib/time";
import type { RatePlanInput } from "./charges";
import { atVersionRow, versionRowOf } from "./pinned-version";
import { getRatePlanRow, type RatePlanRow, type RatePlanView, ratePlanView } from "./rate-plans";

export interface PlanVersionSummary {
	version: number;
	created_at: string;
	/** Active subscriptions rated by this version in the current billing period. */
	subscriptions: number;
}

export type VersionedPlanView = RatePlanView & { versions: PlanVersionSummary[] };
type VersionRow = typeof ratePlanVersions.$inferSelect;

/** Per plan and version, the active subscriptions it rates in the current period (one grouped read). */
async function subscriptionCounts(
	db: Db,
	scope: Scope,
	ids: readonly string[],
): Promise<Map<string, number>> {
	const period = periodOf(nowIso());
	const rows = await db.all<{ id: string; version: number; n: number }>(sql`
		SELECT sp.rate_plan_id AS id, sp.rate_plan_version AS version, count(*) AS n FROM subscription_plans AS sp
		JOIN subscriptions AS s ON s.id = sp.subscription_id AND s.environment = ${scope.environment}
			AND s.status = 'active'
		WHERE sp.rate_plan_id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND sp.effective_period = (
			SELECT max(x.effective_period) FROM subscription_plans AS x
			WHERE x.subscription_id = sp.subscription_id AND x.effective_period <= ${period})
		GROUP BY sp.rate_plan_id, sp.rate_plan_version`);
	return new Map(rows.map((row) => [`${row.id} ${row.version}`, Number(row.n)]));
}

/** Every version of these plans, oldest first, with its active subscriptions. */
async function versionsOf(db: Db, scope: Scope, ids: readonly string[]) {
	const [rows, counts] = await Promise.all([
		db
			.select()
			.from(ratePlanVersions)
			.where(
				inScope(
					scope,
					ratePlanVersions,
					sql`${ratePlanVersions.ratePlanId} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
				),
			)
			.orderBy(ratePlanVersions.ratePlanId, ratePlanVersions.version),
		subscriptionCounts(db, scope, ids),
	]);
	const byPlan = new Map<string, { row: VersionRow; summary: PlanVersionSummary }[]>();
	for (const row of rows) {
		const summary = {
			version: row.version,
			created_at: row.createdAt,
			subscriptions: counts.get(`${row.ratePlanId} ${row.version}`) ?? 0,
		};
		byPlan.set(row.ratePlanId, [...(byPlan.get(row.ratePlanId) ?? []), { row, summary }]);
	}
	return byPlan;
}

/** Plan views (the latest versions) with the list of their versions. */
export async function withVersions(
	db: Db,
	scope: Scope,
	views: RatePlanView[],
): Promise<VersionedPlanView[]> {
	if (views.length === 0) return [];
	const byPlan = await versionsOf(
		db,
		scope,
		views.map((view) => view.id),
	);
	return views.map((view) => ({
		...view,
		versions: (byPlan.get(view.id) ?? []).map((v) => v.summary),
	}));
}

/** The plan at `version` (default: the latest) with the list of its versions. Unknown plan or version → 404. */
export async function getVersionedPlan({
	db,
	scope,
	id,
	version,
}: ById & { version?: number }): Promise<VersionedPlanView> {
	const plan = await getRatePlanRow({ db, scope, id });
	const versions = (await versionsOf(db, scope, [id])).get(id) ?? [];
	const wanted = version ?? plan.version ?? 1;
	const row = versions.find((v) => v.row.version === wanted)?.row;
	if (!row) throw notFound("rate plan version", `${id} v${wanted}`);
	const view = ratePlanView({ ...atVersionRow(plan, row) });
	return { ...view, versions: versions.map((v) => v.summary) };
}

/**
 * A new version of the plan from the body of a plan create: the currency must stay the plan's (409). Written
 * with the plan row's update guarded by the version it read, and the version's primary key: of two concurrent
 * writers, one gets the next number and the other a 409 to retry.
 */
export async function createPlanVersion({
	db,
	scope,
	id,
	input,
}: ById & { input: RatePlanInput }): Promise<VersionedPlanView> {
	const current = await getRatePlanRow({ db, scope, id });
	if (input.currency !== current.currency) {
		throw conflict(
			`Rate plan ${id} is priced in ${current.currency}; a new version must keep that currency, not ${input.currency}.`,
		);
	}
	const from = current.version ?? 1;
	const next: RatePlanRow = {
		...current,
		name: input.name,
		description: input.description ?? null,
		baseFee: Decimal.from(input.base_fee).toString(),
		minimumAmount: Decimal.from(input.minimum_amount).toString(),
		prorate: input.prorate,
		charges: input.charges,
		version: from + 1,
	};
	const row = versionRowOf({ ...next, createdAt: nowIso() }, from + 1);
	const view = ratePlanView(next);
	try {
		await writeAudited(
			db,
			scope,
			[
				db.insert(ratePlanVersions).values(row),
				db
					.update(ratePlans)
					.set({
						name: next.name,
						description: next.description,
						baseFee: next.baseFee,
						minimumAmount: next.minimumAmount,
						prorate: next.prorate,
						charges: next.charges,
						version: from + 1,
					})
					.where(and(inScope(scope, ratePlans, eq(ratePlans.id, id)), eq(ratePlans.version, from))),
			],
			{
				action: "rate_plan.version_created",
				resourceId: id,
				changes: created({
					version: from + 1,
					name: view.name,
					description: view.description,
					base_fee: view.base_fee,
					minimum_amount: view.minimum_amount,
					prorate: view.prorate,
					charges: view.charges,
				}),
			},
		);
	} catch (error) {
		if (isUniqueViolation(error)) {
			throw conflict(`Another version of rate plan ${id} was created at the same time; retry.`);
		}
		throw error;
	}
	return getVersionedPlan({ db, scope, id, version: from + 1 });
}
