import type { ApiKeyPermission } from "../keys/keys";
import type { Principal } from "./auth";

/**
 * Who may call each route. Every route under /v1 is listed here; the route matcher below is also what answers
 * 404 and 405, so a route missing from this table cannot be reached at all (and a test checks the app's routes
 * against it).
 */
export interface Access {
	/** SDK keys may call it. */
	sdk: boolean;
	/** The lowest API-key permission that may call it. */
	api: ApiKeyPermission;
}

const SDK_WRITE: Access = { sdk: true, api: "read-write" };
const SDK_READ: Access = { sdk: true, api: "read-only" };
const READ: Access = { sdk: false, api: "read-only" };
const WRITE: Access = { sdk: false, api: "read-write" };
const ADMIN: Access = { sdk: false, api: "admin" };
/** Every key: what it may then do is decided per operation (the MCP endpoint lists and runs only those). */
const ANY_KEY: Access = { sdk: true, api: "read-only" };

export const routeAccess = {
	"GET /v1/api-keys": ADMIN,
	"POST /v1/api-keys": ADMIN,
	"DELETE /v1/api-keys/{api_key_id}": ADMIN,

	"GET /v1/agents": READ,
	"POST /v1/agents": WRITE,
	"GET /v1/agents/{agent_id}": READ,
	"PATCH /v1/agents/{agent_id}": WRITE,
	"GET /v1/agents/{agent_id}/instances": READ,
	"POST /v1/agents/{agent_id}/instances": WRITE,

	"GET /v1/accounts": READ,
	"POST /v1/accounts": WRITE,
	"GET /v1/accounts/{account_id}": READ,
	"PATCH /v1/accounts/{account_id}": WRITE,
	"POST /v1/accounts/{account_id}/portal-sessions": WRITE,
	"DELETE /v1/portal-sessions/{portal_session_id}": WRITE,

	"GET /v1/pricing/rate-plans": READ,
	"POST /v1/pricing/rate-plans": WRITE,
	"GET /v1/pricing/rate-plans/{rate_plan_id}": READ,
	"DELETE /v1/pricing/rate-plans/{rate_plan_id}": WRITE,
	"POST /v1/pricing/simulate": READ,

	"POST /v1/actions": SDK_WRITE,
	"POST /v1/actions/batch": SDK_WRITE,
	"POST /v1/outcomes": SDK_WRITE,
	"POST /v1/outcomes/batch": SDK_WRITE,
	"GET /v1/usage": SDK_READ,
	"GET /v1/usage/unbilled": READ,
	"GET /v1/events": READ,
	"GET /v1/events/export": ADMIN,

	"GET /v1/alerts": READ,
	"POST /v1/alerts": WRITE,
	"GET /v1/alerts/{alert_id}": READ,
	"DELETE /v1/alerts/{alert_id}": WRITE,
	"GET /v1/entitlements": SDK_READ,

	"GET /v1/subscriptions": READ,
	"POST /v1/subscriptions": WRITE,
	"GET /v1/subscriptions/{subscription_id}": READ,
	"PATCH /v1/subscriptions/{subscription_id}": WRITE,
	"POST /v1/subscriptions/{subscription_id}/cancel": WRITE,

	"GET /v1/invoices": READ,
	"POST /v1/invoices/generate": WRITE,
	"GET /v1/invoices/upcoming": READ,
	"GET /v1/invoices/{invoice_id}": READ,
	"POST /v1/invoices/{invoice_id}/pay": WRITE,
	"POST /v1/invoices/{invoice_id}/void": WRITE,
	"GET /v1/invoices/{invoice_id}/pdf": READ,
	"GET /v1/payments": READ,

	"GET /v1/accounts/{account_id}/balance": READ,
	"GET /v1/accounts/{account_id}/credit-grants": READ,
	"POST /v1/accounts/{account_id}/credit-grants": WRITE,
	"POST /v1/accounts/{account_id}/credit-grants/{credit_grant_id}/void": WRITE,

	"GET /v1/costs": READ,
	"GET /v1/costs/unpriced": READ,
	"POST /v1/costs": WRITE,
	"GET /v1/reports/revenue": READ,
	"GET /v1/reports/pnl": READ,

	"GET /v1/model-prices": READ,
	"POST /v1/model-prices": ADMIN,
	"DELETE /v1/model-prices/{model_price_id}": ADMIN,

	"GET /v1/webhooks": ADMIN,
	"POST /v1/webhooks": ADMIN,
	"POST /v1/webhooks/test": ADMIN,
	"GET /v1/webhooks/{webhook_id}": ADMIN,
	"PATCH /v1/webhooks/{webhook_id}": ADMIN,
	"DELETE /v1/webhooks/{webhook_id}": ADMIN,
	"GET /v1/webhooks/{webhook_id}/deliveries": ADMIN,
	"GET /v1/webhooks/{webhook_id}/deliveries/{delivery_id}": ADMIN,
	"POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry": ADMIN,

	"POST /mcp": ANY_KEY,
} as const satisfies Record<string, Access>;

export type RouteName = keyof typeof routeAccess;

interface CompiledRoute {
	name: RouteName;
	method: string;
	pattern: RegExp;
	literalSegments: number;
	/** bucketKey of its path: the routes that can match a path share it. */
	bucket: string;
}

// The routes that can match a path have its number of segments and its resource (the segment after /v1, literal
// in every route), so a request tests those few patterns rather than all of them.
const bucketKey = (segments: readonly string[]) => `${segments.length} ${segments[2] ?? ""}`;

const compiled: CompiledRoute[] = (Object.keys(routeAccess) as RouteName[]).map((name) => {
	const [method, path] = name.split(" ") as [string, string];
	const segments = path.split("/");
	return {
		name,
		method,
		pattern: new RegExp(`^${segments.map((s) => (s.startsWith("{") ? "[^/]+" : s)).join("/")}/?$`),
		literalSegments: segments.filter((s) => !s.startsWith("{")).length,
		bucket: bucketKey(segments),
	};
});
// Literal segments win over parameters: /v1/webhooks/test is not /v1/webhooks/{webhook_id}.
compiled.sort((a, b) => b.literalSegments - a.literalSegments);

// Buckets keep the order above.
const buckets = new Map<string, CompiledRoute[]>();
for (const route of compiled) {
	const bucket = buckets.get(route.bucket);
	if (bucket) bucket.push(route);
	else buckets.set(route.bucket, [route]);
}

export type RouteMatch = { route: RouteName; access: Access } | { allowed: string[] } | null;

/** The table's route for a request, or the methods the path allows (405), or null (404). */
export function matchRoute(method: string, path: string): RouteMatch {
	// A pattern allows one trailing slash.
	const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
	const candidates = buckets.get(bucketKey(trimmed.split("/"))) ?? [];
	const forPath = candidates.filter((r) => r.pattern.test(path));
	if (forPath.length === 0) return null;
	const wanted = method === "HEAD" ? "GET" : method;
	const hit = forPath.find((r) => r.method === wanted);
	if (hit) return { route: hit.name, access: routeAccess[hit.name] };
	return { allowed: [...new Set(forPath.map((r) => r.method))] };
}

const rank: Record<ApiKeyPermission, number> = { "read-only": 0, "read-write": 1, admin: 2 };

export function mayCall(principal: Principal, access: Access): boolean {
	if (principal.type === "sdk") return access.sdk;
	return rank[principal.permission] >= rank[access.api];
}

/** Whether the gate would let this principal call METHOD PATH (a concrete path): false for unknown routes too. */
export function mayCallRoute(principal: Principal, method: string, path: string): boolean {
	const match = matchRoute(method, path);
	return match !== null && "route" in match && mayCall(principal, match.access);
}
