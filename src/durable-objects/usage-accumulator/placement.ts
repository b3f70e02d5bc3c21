/**
 * Placement: which accumulator counts an agent key's events — of a sharded subscription, the key's shard, so the route
 * carries the shard count read with the membership. The answer is cached in the isolate, so the hot path costs no
 * D1 query; a miss costs one D1 batch for all missing keys of a request, which also registers unknown keys
 * (docs/metering.md#agents-and-instances: usage is never refused for an unknown key).
 *
 * A cached answer may be stale when another isolate changed a subscription. That is safe: the accumulator it
 * names refuses events of instances it no longer holds, and the caller refreshes those keys here and retries.
 * Subscription changes in this isolate forget their keys at once.
 */
import { fromDrizzle, returned, statement } from "../../db/batch";
import type { Scope } from "../../db/scope";
import type { Environment } from "../../env";
import { accumulatorName, membershipGeneration, subscriptionAccumulatorOf } from "./identity";

export interface Route {
	accumulator: string;
	subscriptionId: string | null;
	accountId: string | null;
	/** The subscription's started_at (docs/metering.md#which-subscription-an-event-belongs-to); null for an instance accumulator. */
	startedAt: string | null;
	/** The membership generation this route was read at; the accumulator compares it with what it was told. */
	generation: number;
	/** The subscription's shard count (1 for an instance accumulator): its head is found without D1. */
	shards: number;
}

// Bounds how long a route can outlive a change whose holders were never told (a crash between the D1 write
// and the notification): a fresh lookup then claims the instance for its new holder.
const ROUTE_TTL_MS = 60_000;
const MAX_CACHED_ROUTES = 50_000;
const cache = new Map<string, { route: Route; expires: number }>();

const cacheKey = (environment: Environment, agentKey: string) => `${environment}:${agentKey}`;

export function rememberRoute(environment: Environment, agentKey: string, route: Route): void {
	const key = cacheKey(environment, agentKey);
	cache.delete(key);
	if (cache.size >= MAX_CACHED_ROUTES) {
		const oldest = cache.keys().next().value;
		if (oldest !== undefined) cache.delete(oldest);
	}
	cache.set(key, { route, expires: Date.now() + ROUTE_TTL_MS });
}

export function forgetRoutes(environment: Environment, agentKeys: Iterable<string>): void {
	for (const agentKey of agentKeys) cache.delete(cacheKey(environment, agentKey));
}

/** The route of every key; keys in `refresh` (and any not cached) are read from D1, in one batch. */
export async function routesFor(
	d1: D1Database,
	scope: Scope,
	agentKeys: readonly string[],
	refresh: ReadonlySet<string> = new Set(),
): Promise<Map<string, Route>> {
	const now = Date.now();
	const routes = new Map<string, Route>();
	const missing: string[] = [];
	for (const agentKey of agentKeys) {
		const cached = cache.get(cacheKey(scope.environment, agentKey));
		if (cached && cached.expires > now && !refresh.has(agentKey)) routes.set(agentKey, cached.route);
		else missing.push(agentKey);
	}
	if (missing.length > 0) {
		for (const [agentKey, route] of await lookUpRoutes(d1, scope, missing)) {
			rememberRoute(scope.environment, agentKey, route);
			routes.set(agentKey, route);
		}
	}
	return routes;
}

/**
 * The route of a registered instance, without registering an unknown one: null then. What must refuse an
 * unknown key (a reservation) asks this; a cached route means the key was registered.
 */
export async function existingRoute(d1: D1Database, scope: Scope, agentKey: string): Promise<Route | null> {
	const cached = cache.get(cacheKey(scope.environment, agentKey));
	if (cached && cached.expires > Date.now()) return cached.route;
	const row = await d1
		.prepare(
			`SELECT i.key AS agent_key, m.id AS membership_id, m.subscription_id, m.removed_at, s.account_id, s.started_at, s.shards
			FROM agent_instances AS i
			LEFT JOIN subscription_instances AS m ON m.id =
				(SELECT max(id) FROM subscription_instances WHERE environment = ?1 AND agent_key = i.key)
			LEFT JOIN subscriptions AS s ON s.id = m.subscription_id
			WHERE i.environment = ?1 AND i.key = ?2`,
		)
		.bind(scope.environment, agentKey)
		.first<LatestMembership>();
	if (!row) return null;
	const route = routeOf(scope.environment, row);
	rememberRoute(scope.environment, agentKey, route);
	return route;
}

interface LatestMembership {
	agent_key: string;
	membership_id: number | null;
	subscription_id: string | null;
	removed_at: string | null;
	account_id: string | null;
	started_at: string | null;
	shards: number | null;
}

async function lookUpRoutes(d1: D1Database, scope: Scope, agentKeys: string[]): Promise<Map<string, Route>> {
	// The instances' module and drizzle, loaded by an isolate's first miss rather than at its startup.
	const [{ ensureInstancesStatement }, { database }] = await Promise.all([
		import("../../agents/instances"),
		import("../../db/client"),
	]);
	const [, latest] = await d1.batch([
		fromDrizzle(d1, ensureInstancesStatement(database(d1), scope, agentKeys)),
		// The newest membership row of each key: open → its subscription holds the key; closed or none → the
		// instance's own accumulator does.
		statement(
			d1,
			`SELECT k.value AS agent_key, m.id AS membership_id, m.subscription_id, m.removed_at, s.account_id, s.started_at, s.shards
			FROM json_each(?2) AS k
			LEFT JOIN subscription_instances AS m ON m.id =
				(SELECT max(id) FROM subscription_instances WHERE environment = ?1 AND agent_key = k.value)
			LEFT JOIN subscriptions AS s ON s.id = m.subscription_id`,
			scope.environment,
			JSON.stringify(agentKeys),
		),
	]);
	const routes = new Map<string, Route>();
	for (const row of returned<LatestMembership>(latest)) {
		routes.set(row.agent_key, routeOf(scope.environment, row));
	}
	return routes;
}

function routeOf(environment: Environment, row: LatestMembership): Route {
	if (row.membership_id !== null && row.removed_at === null && row.subscription_id !== null) {
		return {
			accumulator: subscriptionAccumulatorOf(
				environment,
				row.subscription_id,
				row.shards ?? 1,
				row.agent_key,
			),
			subscriptionId: row.subscription_id,
			accountId: row.account_id,
			startedAt: row.started_at,
			generation: membershipGeneration.opened(row.membership_id),
			shards: row.shards ?? 1,
		};
	}
	return {
		accumulator: accumulatorName(environment, { agentKey: row.agent_key }),
		subscriptionId: null,
		accountId: null,
		startedAt: null,
		generation: row.membership_id === null ? 0 : membershipGeneration.closed(row.membership_id),
		shards: 1,
	};
}
