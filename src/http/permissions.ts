import type { ApiKeyPermission } from "../lib/key-permissions";
import type { Principal } from "./auth";

/** Who may call a route: each route declares it where it is defined (`access` in its createRoute). */
export interface Access {
	/** SDK keys may call it. */
	sdk: boolean;
	/** The lowest API-key permission that may call it. */
	api: ApiKeyPermission;
}

/** What agents call with SDK keys: sending events (and API keys from read-write up). */
export const SDK_WRITE: Access = { sdk: true, api: "read-write" };
/** What agents read with SDK keys: their usage and entitlements (and any API key). */
export const SDK_READ: Access = { sdk: true, api: "read-only" };
export const READ: Access = { sdk: false, api: "read-only" };
export const WRITE: Access = { sdk: false, api: "read-write" };
export const ADMIN: Access = { sdk: false, api: "admin" };
/** Every key: what it may then do is decided per operation (the MCP endpoint lists and runs only those). */
export const ANY_KEY: Access = { sdk: true, api: "read-only" };

/** Every API route is mounted under this prefix (app.ts); the routers declare their paths without it. */
export const API_PREFIX = "/v1";

const declared: Record<string, Access> = {};

/**
 * The access of every route, `"GET /v1/agents/{agent_id}"` → its Access: an index of what the routers declared
 * (router.ts records each route as it is defined), not a table of its own. The route matcher below is also what
 * answers 404 and 405, so a route that declared no access could not be reached at all; router.ts refuses one.
 */
export const routeAccess: Readonly<Record<string, Access>> = declared;

export type RouteName = string;

/** Records a route's access as its router defines it. */
export function declareAccess(method: string, path: string, access: Access): void {
	declareRouteAccess(`${method.toUpperCase()} ${API_PREFIX}${path}`, access);
}

/** Records the access of a route outside /v1 by its full name, e.g. `"POST /mcp"`. */
export function declareRouteAccess(name: string, access: Access): void {
	if (declared[name]) {
		// The route's own router confirms what was declared ahead of it, once and alike; anything else is a clash.
		if (ahead.delete(name) && declared[name] === access) return;
		throw new Error(`${name} is defined twice`);
	}
	declared[name] = access;
	index = undefined;
}

const ahead = new Set<string>();

/**
 * Records a route's access before its router is loaded (the ingest app, ingest-app.ts, answers routes whose zod
 * router it imports on first need): that router, once loaded, must declare the very same access.
 */
export function declareAccessAhead(method: string, path: string, access: Access): void {
	const name = `${method.toUpperCase()} ${API_PREFIX}${path}`;
	if (declared[name] === access) return; // its router was loaded first (a test that built the whole app)
	declareRouteAccess(name, access);
	ahead.add(name);
}

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

// Built from the declarations on the first request, once every router has been defined.
let index: Map<string, CompiledRoute[]> | undefined;

function buildIndex(): Map<string, CompiledRoute[]> {
	const compiled: CompiledRoute[] = Object.keys(declared).map((name) => {
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
	return buckets;
}

export type RouteMatch = { route: RouteName; access: Access } | { allowed: string[] } | null;

/** The declared route for a request, or the methods the path allows (405), or null (404). */
export function matchRoute(method: string, path: string): RouteMatch {
	// A pattern allows one trailing slash.
	const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
	index ??= buildIndex();
	const candidates = index.get(bucketKey(trimmed.split("/"))) ?? [];
	const forPath = candidates.filter((r) => r.pattern.test(path));
	if (forPath.length === 0) return null;
	const wanted = method === "HEAD" ? "GET" : method;
	const hit = forPath.find((r) => r.method === wanted);
	if (hit) return { route: hit.name, access: declared[hit.name] as Access };
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
