/**
 * What the customer sees first on the portal: their account, each subscription's current period so far (usage
 * and amount, rated exactly as GET /v1/usage?subscription_id= rates it), the alerts and budgets of those
 * subscriptions, and their credit balance and grants. Everything is read through the same domain verbs the /v1
 * routes use, in the session's environment and for the session's account only.
 */
import { getAccount } from "../accounts/accounts";
import { type AlertView, listAlerts } from "../alerts/alerts";
import { accountBalance } from "../balance/balance";
import { lastDayOf } from "../billing-period/period";
import { planForPeriod } from "../billing-period/plan-in-effect";
import { type CreditGrantView, listGrants } from "../credits/grants";
import { database } from "../db/client";
import type { Scope } from "../db/scope";
import type { Env } from "../env";
import { nowIso, periodBounds, periodOf } from "../lib/time";
import { readUsage, type SubscriptionUsageReport } from "../metering/usage";
import { ratePlanPricing } from "../pricing/rate-plans";
import { listSubscriptions, type SubscriptionView } from "../subscriptions/views";
import { chargeDescriptions } from "./charge-descriptions";

/** The most of each list the overview shows; an account with more is a back-office matter. */
const SHOWN = 100;

export interface PortalSubscription {
	id: string;
	rate_plan_id: string;
	rate_plan_name: string;
	status: SubscriptionView["status"];
	started_at: string;
	cancel_at: string | null;
	cancelled_at: string | null;
	billing_period: string;
	period_start: string;
	period_end: string;
	currency: string;
	usage: SubscriptionUsageReport["usage"];
	charges: SubscriptionUsageReport["charges"];
	/** The period's amount so far, base fee included. */
	amount_so_far: number;
	/** What each charge is called on the invoice, by metric: the plan's description, else a readable name. */
	charge_descriptions: Record<string, string>;
}

export interface PortalOverview {
	seller: string;
	account: { id: string; name: string; email: string; currency: string };
	billing_period: string;
	subscriptions: PortalSubscription[];
	alerts: AlertView[];
	credits: {
		currency: string;
		available: number;
		pending_usage: number;
		projected: number;
		grants: CreditGrantView[];
	};
}

export async function portalOverview({
	env,
	scope,
	accountId,
	seller,
}: {
	env: Env;
	scope: Scope;
	accountId: string;
	seller: string;
}): Promise<PortalOverview> {
	const db = database(env.DB);
	const account = await getAccount({ db, scope, id: accountId });
	const period = periodOf(nowIso());
	const { start, end } = periodBounds(period);
	const { items } = await listSubscriptions({
		db,
		scope,
		filters: { account_id: accountId },
		limit: SHOWN,
		offset: 0,
	});
	// Those that count in this period: active, or cancelled during it.
	const current = items.filter((s) => s.status === "active" || (s.cancelled_at ?? "") >= start);

	const [subscriptions, alerts, balance, grants] = await Promise.all([
		Promise.all(current.map((s) => subscriptionSoFar(env, scope, s, period, { start, end }))),
		Promise.all(
			current.map(
				async (s) => (await listAlerts({ db, scope, subscriptionId: s.id, limit: SHOWN, offset: 0 })).items,
			),
		),
		accountBalance({ env, scope, accountId }),
		listGrants({ db, scope, accountId, limit: SHOWN, offset: 0 }),
	]);
	return {
		seller,
		account: { id: account.id, name: account.name, email: account.email, currency: account.currency },
		billing_period: period,
		subscriptions,
		// Margin alerts are the seller's own business (what its costs leave of the price), not the customer's.
		alerts: alerts.flat().filter((alert) => alert.type === "usage"),
		credits: {
			currency: balance.currency,
			available: balance.available,
			pending_usage: balance.pending_usage,
			projected: balance.projected,
			grants: grants.items,
		},
	};
}

async function subscriptionSoFar(
	env: Env,
	scope: Scope,
	subscription: SubscriptionView,
	period: string,
	bounds: { start: string; end: string },
): Promise<PortalSubscription> {
	const db = database(env.DB);
	const [report, plan] = await Promise.all([
		readUsage({
			env,
			db,
			scope,
			subscriptionId: subscription.id,
			period,
			startDay: `${period}-01`,
			endDay: lastDayOf(period),
		}) as Promise<SubscriptionUsageReport>,
		planForPeriod(db, scope, subscription.id, period),
	]);
	// The plan and version that rate the period (its own version, not the plan's latest): its names apply.
	if (!plan) throw new Error(`Subscription ${subscription.id} has no plan for ${period}`);
	return {
		id: subscription.id,
		rate_plan_id: report.rate_plan_id,
		rate_plan_name: plan.name,
		status: subscription.status,
		started_at: subscription.started_at,
		cancel_at: subscription.cancel_at,
		cancelled_at: subscription.cancelled_at,
		billing_period: period,
		period_start: bounds.start,
		period_end: bounds.end,
		currency: report.currency,
		usage: report.usage,
		charges: report.charges,
		amount_so_far: report.total,
		charge_descriptions: chargeDescriptions(report.charges, ratePlanPricing(plan).charges),
	};
}
