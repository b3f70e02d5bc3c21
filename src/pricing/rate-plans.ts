/**
 * Rate plans as stored resources, and simulation against them. A plan never changes once created — a change of
 * price is a new plan — so subscriptions and invoices can rely on a plan id meaning the same prices forever.
 * DELETE only archives: an archived plan stays readable and can still be simulated, but no longer subscribed to.
 */
import { created } from "../audit/record";
import { updateAudited, writeAudited } from "../audit/write";
import { newestFirst } from "../db/pages";
import { type ById, getInScope, type InScope, type Page } from "../db/rows";
import { ratePlans, ratePlanVersions } from "../db/schema";
import { inScope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { DomainError } from "../lib/errors";
import { newId } from "../lib/ids";
import { inexactAmountMessage, isExactAsJsonNumber } from "../lib/money";
import { nowIso } from "../lib/time";
import type { Charge, PlanPricing, RatePlanInput } from "./charges";
import { withDiscount } from "./period-discount";
import { versionRowOf } from "./pinned-version";
import { type RatedUsage, type RatedUsageJson, ratedUsageToJson, rateUsage } from "./rate";
import { subscriptionPlanNow } from "./subscription-plan";

export type RatePlanStatus = "active" | "archived";

export interface RatePlanView {
	id: string;
	name: string;
	description: string | null;
	currency: string;
	/** Major units, a JSON number at the edge; stored as an exact decimal string. */
	base_fee: number;
	/** The least a billing period costs; 0: no minimum. */
	minimum_amount: number;
	/** Base fee in proportion to the time a subscription was active in the period (docs/billing.md#subscription-lifecycle). */
	prorate: boolean;
	charges: Charge[];
	status: RatePlanStatus;
	/** The version shown (docs/plan-versions.md); a plan is version 1 when created. */
	version: number;
	created_at: string;
}

/** `version` is the latest version's number; rows built by hand (tests) may leave it out: version 1. */
export type RatePlanRow = Omit<typeof ratePlans.$inferSelect, "version"> & { version?: number };

export function ratePlanView(row: RatePlanRow): RatePlanView {
	return {
		id: row.id,
		name: row.name,
		description: row.description,
		currency: row.currency,
		base_fee: Decimal.from(row.baseFee).toNumber(),
		minimum_amount: Decimal.from(row.minimumAmount).toNumber(),
		prorate: row.prorate,
		// Stored as validated at creation; prices have at most 12 decimals, so JSON numbers carry them exactly.
		charges: row.charges as Charge[],
		status: row.status,
		version: row.version ?? 1,
		created_at: row.createdAt,
	};
}

/** What rating needs, with the base fee as its exact stored decimal. */
export function ratePlanPricing(row: RatePlanRow): PlanPricing {
	return {
		currency: row.currency,
		base_fee: row.baseFee,
		minimum_amount: row.minimumAmount,
		charges: row.charges as Charge[],
	};
}

/** `input` is a parsed RatePlanInput (defaults filled in, cross-field rules checked). */
export async function createRatePlan({
	db,
	scope,
	input,
}: InScope & {
	input: RatePlanInput;
}): Promise<RatePlanView> {
	const row: RatePlanRow = {
		id: newId("plan"),
		environment: scope.environment,
		name: input.name,
		description: input.description ?? null,
		currency: input.currency,
		baseFee: Decimal.from(input.base_fee).toString(),
		minimumAmount: Decimal.from(input.minimum_amount).toString(),
		charges: input.charges,
		status: "active",
		createdAt: nowIso(),
		prorate: input.prorate,
		version: 1,
	};
	const view = ratePlanView(row);
	const statements = [
		db.insert(ratePlans).values(row),
		db.insert(ratePlanVersions).values(versionRowOf(row, 1)),
	];
	await writeAudited(db, scope, statements, {
		action: "rate_plan.created",
		resourceId: row.id,
		changes: created({
			name: view.name,
			description: view.description,
			currency: view.currency,
			base_fee: view.base_fee,
			minimum_amount: view.minimum_amount,
			prorate: view.prorate,
			charges: view.charges,
		}),
	});
	return view;
}

export async function getRatePlanRow({ db, scope, id }: ById): Promise<RatePlanRow> {
	return getInScope(db, scope, ratePlans, "rate plan", id);
}

export async function getRatePlan({ db, scope, id }: ById): Promise<RatePlanView> {
	return ratePlanView(await getRatePlanRow({ db, scope, id }));
}

export async function listRatePlans({
	db,
	scope,
	limit,
	offset,
}: InScope & Page): Promise<{ items: RatePlanView[]; total: number }> {
	const { rows, total } = await newestFirst(db, ratePlans, inScope(scope, ratePlans), { limit, offset });
	return { items: rows.map(ratePlanView), total };
}

/** Idempotent: archiving an archived plan answers the plan again, unchanged. */
export async function archiveRatePlan({ db, scope, id }: ById): Promise<RatePlanView> {
	const row = await getRatePlanRow({ db, scope, id });
	if (row.status === "archived") return ratePlanView(row);
	return ratePlanView(
		await updateAudited(db, scope, ratePlans, "rate plan", id, { status: "archived" }, "rate_plan.archived"),
	);
}

export interface SimulationView extends RatedUsageJson {
	rate_plan_id: string;
	/** Set when the simulation priced a subscription's plan with its negotiated prices. */
	subscription_id?: string;
}

/**
 * Prices sample usage with a stored plan. Usage keys must be the plan's metrics (a typo would otherwise price
 * as zero and look plausible); metrics left out count as 0. `usage` values are already checked to be finite ≥ 0.
 */
/** A simulation whose charge or total a JSON number cannot carry exactly is refused, naming the amount. */
function assertExactAmounts(rated: RatedUsage): void {
	const inexact = [
		...rated.charges.map((line) => ({
			what: `The ${line.metric} charge`,
			path: `usage.${line.metric}`,
			amount: line.amount,
		})),
		{ what: "The total", path: "usage", amount: rated.total },
	].filter(({ amount }) => !isExactAsJsonNumber(amount));
	const first = inexact[0];
	if (!first) return;
	throw new DomainError("validation_error", inexactAmountMessage(first.what, first.amount, rated.currency), {
		details: inexact.map(({ what, path, amount }) => ({
			path,
			message: inexactAmountMessage(what, amount, rated.currency),
		})),
	});
}

export async function simulateRatePlan({
	db,
	scope,
	ratePlanId,
	subscriptionId,
	usage,
}: InScope & {
	/** Exactly one of ratePlanId and subscriptionId. */
	ratePlanId?: string;
	subscriptionId?: string;
	usage: Readonly<Record<string, number>>;
}): Promise<SimulationView> {
	const { plan: row, discount } =
		subscriptionId === undefined
			? { plan: await getRatePlanRow({ db, scope, id: ratePlanId as string }), discount: null }
			: await subscriptionPlanNow(db, scope, subscriptionId);
	const pricing = ratePlanPricing(row);
	const metrics = pricing.charges.map((charge) => charge.metric);
	const unknown = Object.keys(usage).filter((key) => !metrics.includes(key));
	if (unknown.length > 0) {
		const known = metrics.length > 0 ? `its metrics are ${metrics.join(", ")}` : "it has no metrics";
		const message = `Unknown usage key${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} for rate plan ${row.id}: ${known}.`;
		throw new DomainError("validation_error", message, {
			details: unknown.map((key) => ({
				path: `usage.${key}`,
				message: `Not a metric of this plan; ${known}.`,
			})),
		});
	}
	const quantities = new Map(
		Object.entries(usage).map(([metric, quantity]) => [metric, Decimal.from(quantity)]),
	);
	// A subscription's discount covering the current period makes the same line as on its invoice.
	const rated = withDiscount(rateUsage(pricing, quantities), discount);
	assertExactAmounts(rated);
	const { currency, charges, total } = ratedUsageToJson(rated);
	if (subscriptionId !== undefined) {
		return { rate_plan_id: row.id, subscription_id: subscriptionId, currency, charges, total };
	}
	return { rate_plan_id: row.id, currency, charges, total };
}
