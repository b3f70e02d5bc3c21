/**
 * The last step of `/v1/openapi.json`: what every operation shares because a middleware does it, not the route,
 * is declared here once, so that routes added later get it without hand work (docs/conventions.md#requests-and-responses, docs/keys-and-environments.md#rate-limits, docs/conventions.md#the-idempotency-key-header):
 *
 * - `X-Request-Id` on every response; `X-RateLimit-*` on every response of an authenticated request (all but
 *   401); `WWW-Authenticate` on 401; `Retry-After` on 429 (http/gate.ts, http/auth.ts).
 * - On every POST, the `Idempotency-Key` request header, and `Idempotent-Replayed` on the responses a replay can
 *   give (http/idempotency.ts; metering events replay as 200 only).
 * - Who may call the operation, from the permission table (http/permissions.ts), appended to its description.
 *   An operation declared with `security: []` (GET /healthz) needs no key: it says so, and its responses carry
 *   `X-Request-Id` only, since neither the gate nor the rate limiter runs for it.
 * - Conventions by field name: `*_at`, `timestamp`, `period_start` and `period_end` are date-times; `currency`
 *   and `*_currency` are ISO 4217 codes; integer query parameters are never null (zod's coerce reads as nullable).
 * - Request bodies: a field with a `default` is optional, and its default is said in words rather than as
 *   `default`, because openapi-typescript's default settings make a property with `default` required.
 * - An example on every request and response body that has none, composed from the schema's field-level
 *   examples, enums and formats (see exampleOf). Spectral checks each one against its schema.
 *
 * What a route must still say itself: `operationId` (verbNoun in camelCase, e.g. `listInvoices`,
 * `createRatePlan`, `payInvoice`), `tags`, `summary`; test/node/openapi.test.ts fails naming any operation without.
 */
import type { MiddlewareHandler } from "hono";
import { EVENT_PATHS } from "./idempotency";
import { type Access, routeAccess } from "./permissions";

// biome-ignore lint/suspicious/noExplicitAny: a generated JSON document, walked generically
type J = any;

const TAG_DESCRIPTIONS: Record<string, string> = {
	"API keys": "SDK keys for agents and API keys for back offices (admin only).",
	Agents: "Agents and the instance keys their deployments send events with.",
	Accounts: "The customers who are billed.",
	Pricing: "Rate plans and what-if pricing.",
	Subscriptions:
		"An account on a rate plan, with the agent instances it pays for; a hot one may be counted in shards (set at creation).",
	Metering: "Actions and outcomes sent by agents (SDK keys), and usage so far.",
	Invoices: "Monthly invoices, their payment and voiding.",
	Costs: "What running the agents cost: recorded from events or entered by hand.",
	Reports: "Revenue and profit and loss.",
	Webhooks: "Signed notifications of what happened, their delivery log and tests.",
	Alerts:
		"Thresholds on usage or spend that notify, or block further events, and the entitlements they leave.",
	Credits: "Prepaid credit grants of an account, their ledger and balance.",
	Events: "The raw metering events: explore and export them.",
	Health: "Whether the service is up; no key needed.",
	"Customer portal":
		"What an account's own customer portal reads, with the portal token of a link minted for that account.",
	"Model prices":
		"What LLM tokens cost per model: the catalog that ships with the service and this environment's own prices.",
};

const PORTAL_ACCESS =
	"Who may call it: a customer portal token (`pst_…`) only, for its own account; API and SDK keys answer 401.";

const HEADERS: Record<string, J> = {
	"X-Request-Id": {
		description:
			"The request's id (the caller's own `X-Request-Id` when it sent one). Quote it in support requests.",
		required: true,
		schema: { type: "string", example: "req_01jd0000000000000000000000" },
	},
	"X-RateLimit-Limit": {
		description: "Requests this key may make per 60-second window.",
		required: true,
		schema: { type: "integer", example: 1000 },
	},
	"X-RateLimit-Remaining": {
		description: "Requests left in the current window, after this one.",
		required: true,
		schema: { type: "integer", example: 999 },
	},
	"X-RateLimit-Reset": {
		description: "When the current window ends, in Unix epoch seconds.",
		required: true,
		schema: { type: "integer", example: 1795255260 },
	},
	"Retry-After": {
		description: "Seconds until the rate-limit window resets.",
		required: true,
		schema: { type: "integer", minimum: 1, example: 12 },
	},
	"WWW-Authenticate": {
		description: "Always `Bearer`.",
		required: true,
		schema: { type: "string", enum: ["Bearer"] },
	},
	"Idempotent-Replayed": {
		description:
			"`true` when this is the stored response of an earlier request with the same Idempotency-Key.",
		required: false,
		schema: { type: "string", enum: ["true"] },
	},
};

const IDEMPOTENCY_KEY: J = {
	name: "Idempotency-Key",
	in: "header",
	required: false,
	description:
		"Makes a retry safe: the first completed response is kept for 24 hours (per environment, API key, method " +
		"and path) and a repeat with the same body gets it again with `Idempotent-Replayed: true`; a different body " +
		"answers 409 idempotency_key_reused, a repeat while the first still runs 409 idempotency_key_in_use.",
	schema: { type: "string", minLength: 1, maxLength: 255, example: "c2f1d1e4-order-42" },
};

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

function accessText(access: Access | undefined): string | null {
	if (!access) return null;
	const api = access.api === "admin" ? "admin API keys" : `API keys with ${access.api} permission or more`;
	return `Who may call it: ${access.sdk ? `SDK keys and ${api}` : api}.`;
}

/** Statuses at which the idempotency middleware can have stored a response that a repeat replays. */
function replayable(path: string, status: string): boolean {
	if (EVENT_PATHS.has(path)) return status === "200";
	return status.startsWith("2") || status === "400" || status === "404" || status === "409";
}

/** An operation that overrides the document's bearer security with none. */
const isPublic = (operation: J) => Array.isArray(operation.security) && operation.security.length === 0;

function responseHeaders(method: string, path: string, status: string, open: boolean): Record<string, J> {
	const headers: Record<string, J> = { "X-Request-Id": ref("headers", "X-Request-Id") };
	if (open) return headers;
	if (status !== "401") {
		for (const name of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]) {
			// A 500 can come from before the rate limiter answered.
			headers[name] = status === "500" ? { ...HEADERS[name], required: false } : ref("headers", name);
		}
	}
	if (status === "401") headers["WWW-Authenticate"] = ref("headers", "WWW-Authenticate");
	if (status === "429") headers["Retry-After"] = ref("headers", "Retry-After");
	if (method === "post" && replayable(path, status)) {
		headers["Idempotent-Replayed"] = ref("headers", "Idempotent-Replayed");
	}
	return headers;
}

const METHODS = ["get", "put", "post", "patch", "delete"];

/** Every operation of the document with its method and path. */
export function operationsOf(doc: J): { method: string; path: string; operation: J }[] {
	return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
		METHODS.filter((m) => (item as J)[m]).map((method) => ({ method, path, operation: (item as J)[method] })),
	);
}

function resolve(doc: J, schema: J): J {
	let s = schema;
	for (let i = 0; i < 10 && s?.$ref; i++)
		s = doc.components?.schemas?.[String(s.$ref).split("/").pop() ?? ""];
	return s;
}

/** Calls `visit` on every schema object within `schema` (not following $refs), with its property name if any. */
function walkSchema(
	schema: J,
	visit: (s: J, property: string | null, parent: J) => void,
	property: string | null = null,
	parent: J = null,
) {
	if (!schema || typeof schema !== "object") return;
	visit(schema, property, parent);
	for (const [name, child] of Object.entries(schema.properties ?? {})) walkSchema(child, visit, name, schema);
	for (const key of ["items", "additionalProperties", "not"]) {
		if (schema[key] && typeof schema[key] === "object") walkSchema(schema[key], visit, null, schema);
	}
	for (const key of ["oneOf", "anyOf", "allOf"]) {
		for (const child of schema[key] ?? []) walkSchema(child, visit, property, parent);
	}
}

const isString = (s: J) => s.type === "string" || (Array.isArray(s.type) && s.type.includes("string"));
const TIMESTAMP = /(^|_)at$|^timestamp$|^period_(start|end)$/;
const CURRENCY = /(^|_)currency$/;

/**
 * zod writes both `minimum` and `exclusiveMinimum` when a number has two lower bounds (positive() and a range
 * check, say); linters want one. The stricter of the two says the same thing alone.
 */
function tightenBounds(s: J) {
	if (typeof s.minimum === "number" && typeof s.exclusiveMinimum === "number") {
		if (s.exclusiveMinimum >= s.minimum) delete s.minimum;
		else delete s.exclusiveMinimum;
	}
	if (typeof s.maximum === "number" && typeof s.exclusiveMaximum === "number") {
		if (s.exclusiveMaximum <= s.maximum) delete s.maximum;
		else delete s.exclusiveMaximum;
	}
}

function fieldConventions(s: J, property: string | null) {
	tightenBounds(s);
	if (!property || !isString(s) || s.enum || s.const !== undefined) return;
	if (TIMESTAMP.test(property) && !s.format) s.format = "date-time";
	if (CURRENCY.test(property) && !s.pattern) {
		s.pattern = "^[A-Z]{3}$";
		s.description ??= "An ISO 4217 currency code in upper case.";
	}
}

/** Schemas (by component name) that request bodies reach, following $refs. */
function requestSchemas(doc: J): Set<string> {
	const names = new Set<string>();
	const follow = (schema: J) =>
		walkSchema(schema, (s) => {
			const name = typeof s.$ref === "string" ? s.$ref.split("/").pop() : undefined;
			if (name && !names.has(name)) {
				names.add(name);
				follow(doc.components?.schemas?.[name]);
			}
		});
	for (const { operation } of operationsOf(doc)) {
		for (const media of Object.values(operation.requestBody?.content ?? {})) follow((media as J).schema);
	}
	return names;
}

function defaultsInWords(schema: J) {
	walkSchema(schema, (s, _property, parent) => {
		if (!parent || s.default === undefined) return;
		const text = `Default: \`${JSON.stringify(s.default)}\`.`;
		s.description = s.description ? `${s.description} ${text}` : text;
		delete s.default;
	});
}

const ID_PREFIXES: [RegExp, string][] = [
	[/webhook/, "whk"],
	[/deliver/, "dlv"],
	[/event/, "evt"],
	[/invoice/, "inv"],
	[/subscription/, "sub"],
	[/rate_?plan|plan/, "plan"],
	[/account|customer/, "acct"],
	[/agent/, "agt"],
	[/apikey|api_key|^key/, "key"],
	[/payment/, "pay"],
	[/outcome/, "out"],
	[/action/, "act"],
	[/cost/, "cost"],
	[/request/, "req"],
];

function exampleId(hint: string): string {
	const prefix = ID_PREFIXES.find(([pattern]) => pattern.test(hint.toLowerCase()))?.[1] ?? "id";
	return `${prefix}_01jd0000000000000000000000`;
}

/** Examples by field name, for fields whose schema gives none (used only where they fit the schema's type). */
const BY_NAME: Record<string, unknown> = {
	agent_key: "lead-qualifier-eu-1",
	agent_instance_ids: "lead-qualifier-eu-1",
	action_type: "llm_call",
	outcome_type: "converted_lead",
	cost_type: "llm_tokens",
	type: "llm_call",
	metric: "llm_calls",
	field: "tokens",
	period: "2026-11",
	start_date: "2026-11-01",
	end_date: "2026-11-30",
	prefix: "sk_live_7Hq2",
	reference: "wire-2026-001",
	external_id: "crm-4711",
	limit: 20,
	offset: 0,
	total: 1,
	count: 1,
	status_code: 200,
	duration_ms: 84,
	attempts: 1,
	value: 1200,
	amount: 313.77,
};

const NAMES: [RegExp, string][] = [
	[/agent/i, "Lead qualifier"],
	[/account|customer/i, "Acme"],
	[/plan/i, "Growth"],
	[/key/i, "agents in production"],
];

function exampleString(s: J, property: string, owner: string): string {
	if (s.format === "date-time") return "2026-11-21T10:00:00.000Z";
	if (s.format === "date") return "2026-11-21";
	if (s.format === "email" || property === "email") return "ap@acme.example";
	if (s.format === "uri" || property === "url") return "https://example.com/webhooks/billing";
	if (property === "key" && /apikey/i.test(owner)) return "sk_live_7Hq2xXb9dL0aPz4Kc1mN8rT5vW3yE6uQ";
	if (property === "key") return "lead-qualifier-eu-1";
	if (property === "name") return NAMES.find(([pattern]) => pattern.test(owner))?.[1] ?? "Lead qualifier";
	if (property === "id") return exampleId(owner);
	if (property.endsWith("_id")) return exampleId(property);
	if (CURRENCY.test(property)) return "USD";
	if (s.pattern === "^[A-Z]{3}$") return "USD";
	if (s.pattern && new RegExp(s.pattern).test(property)) return property;
	const text = property.replace(/_/g, " ") || "text";
	return s.maxLength !== undefined ? text.slice(0, s.maxLength) : text;
}

function exampleNumber(s: J): number {
	const integer = s.type === "integer" || (Array.isArray(s.type) && s.type.includes("integer"));
	let n = 1;
	if (s.minimum !== undefined && n < s.minimum) n = s.minimum;
	if (s.exclusiveMinimum !== undefined && n <= s.exclusiveMinimum) n = s.exclusiveMinimum + 1;
	if (s.maximum !== undefined && n > s.maximum) n = s.maximum;
	return integer ? Math.ceil(n) : n;
}

/**
 * An example value of a schema: its own `example` where it has one, else one composed from its parts — the
 * required properties of an object and those with an example of their own, the first branch of a union, the
 * first value of an enum, a value fitting the format, bounds and field name.
 */
export function exampleOf(doc: J, schema: J, property = "", owner = "", depth = 0): unknown {
	if (!schema || typeof schema !== "object" || depth > 20) return null;
	if (schema.example !== undefined) return schema.example;
	if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
	if (schema.$ref) {
		const name = String(schema.$ref).split("/").pop() ?? "";
		return exampleOf(doc, resolve(doc, schema), property, name, depth + 1);
	}
	if (schema.const !== undefined) return schema.const;
	if (Array.isArray(schema.enum)) return schema.enum[0];
	if (schema.allOf) {
		return Object.assign(
			{},
			...schema.allOf.map((part: J) => exampleOf(doc, part, property, owner, depth + 1)),
		);
	}
	const branches = schema.oneOf ?? schema.anyOf;
	if (branches) return exampleOf(doc, branches[0], property, owner, depth + 1);
	if (schema.default !== undefined) return schema.default;
	const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
	const type = types.find((t) => t !== "null") ?? types[0];
	if (type === "null") return null;
	const named = BY_NAME[property];
	if (named !== undefined && fits(schema, type, named)) return named;
	switch (type) {
		case "object": {
			const out: Record<string, unknown> = {};
			const required: string[] = schema.required ?? [];
			for (const [name, child] of Object.entries(schema.properties ?? {})) {
				const c = child as J;
				if (required.includes(name) || c.example !== undefined)
					out[name] = exampleOf(doc, c, name, owner, depth + 1);
			}
			return out;
		}
		case "array": {
			const count = Math.max(1, schema.minItems ?? 1);
			return Array.from({ length: count }, () => exampleOf(doc, schema.items, property, owner, depth + 1));
		}
		case "string":
			return exampleString(schema, property, owner);
		case "integer":
		case "number":
			return exampleNumber(schema);
		case "boolean":
			return true;
		case "null":
			return null;
		default:
			return null;
	}
}

function fits(schema: J, type: string | undefined, value: unknown): boolean {
	if (typeof value === "string") {
		return type === "string" && (!schema.pattern || new RegExp(schema.pattern).test(value)) && !schema.format;
	}
	if (typeof value !== "number") return false;
	const inRange =
		(schema.minimum === undefined || value >= schema.minimum) &&
		(schema.exclusiveMinimum === undefined || value > schema.exclusiveMinimum) &&
		(schema.maximum === undefined || value <= schema.maximum);
	return inRange && (type === "number" || (type === "integer" && Number.isInteger(value)));
}

/** JSON bodies get a composed example; a PDF or CSV body has no meaningful one to compose. */
const isJson = (mediaType: string) => /^application\/([a-z.+-]+\+)?json\b/.test(mediaType);

function withExample(doc: J, content: J) {
	for (const [type, media] of Object.entries(content ?? {})) {
		if (!isJson(type)) continue;
		const m = media as J;
		if (m.schema && m.example === undefined && m.examples === undefined) m.example = exampleOf(doc, m.schema);
	}
}

/** Adds what middlewares and conventions make true of every operation (see the comment at the top). */
export function finishDocument(doc: J): J {
	doc.components ??= {};
	doc.components.headers = { ...HEADERS, ...doc.components.headers };
	doc.components.parameters = { IdempotencyKey: IDEMPOTENCY_KEY, ...doc.components.parameters };

	for (const schema of Object.values(doc.components.schemas ?? {})) walkSchema(schema, fieldConventions);
	for (const name of requestSchemas(doc)) defaultsInWords(doc.components.schemas[name]);

	const tags = new Set<string>();
	for (const { method, path, operation } of operationsOf(doc)) {
		for (const tag of operation.tags ?? []) tags.add(tag);
		const access = isPublic(operation)
			? "Who may call it: anyone, without a key."
			: path.startsWith("/portal/api/")
				? PORTAL_ACCESS
				: accessText((routeAccess as Record<string, Access>)[`${method.toUpperCase()} ${path}`]);
		if (access)
			operation.description = operation.description ? `${operation.description}\n\n${access}` : access;

		for (const parameter of operation.parameters ?? []) {
			walkSchema(parameter.schema, fieldConventions, parameter.name);
			const types = parameter.schema?.type;
			if (parameter.in === "query" && Array.isArray(types) && types.includes("null")) {
				const rest = types.filter((t: string) => t !== "null");
				parameter.schema.type = rest.length === 1 ? rest[0] : rest;
			}
		}
		if (method === "post") {
			operation.parameters ??= [];
			const parameters: J[] = operation.parameters;
			// A route that reads the header itself declares it in lower case (Hono's header validator sees it so):
			// the document spells it like every other operation, for generated clients.
			const own = parameters.find(
				(p) => p.in === "header" && String(p.name).toLowerCase() === "idempotency-key",
			);
			if (own) own.name = "Idempotency-Key";
			else parameters.push(ref("parameters", "IdempotencyKey"));
		}
		if (operation.requestBody?.content) {
			for (const media of Object.values(operation.requestBody.content)) {
				walkSchema((media as J).schema, fieldConventions);
				defaultsInWords((media as J).schema);
			}
			withExample(doc, operation.requestBody.content);
		}
		for (const [status, response] of Object.entries(operation.responses ?? {})) {
			const r = response as J;
			r.headers = { ...responseHeaders(method, path, status, isPublic(operation)), ...r.headers };
			if (r.content) {
				for (const media of Object.values(r.content)) walkSchema((media as J).schema, fieldConventions);
				withExample(doc, r.content);
			}
		}
	}
	for (const webhook of Object.values(doc.webhooks ?? {})) {
		for (const operation of Object.values(webhook as J)) {
			const content = (operation as J).requestBody?.content;
			if (content) withExample(doc, content);
		}
	}
	doc.tags = [...tags].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
	return doc;
}

/** Middleware for the document's route: the generated document, finished (once per isolate, then kept). */
export function finishedDocument(): MiddlewareHandler {
	let finished: string | undefined;
	return async (c, next) => {
		if (finished === undefined) {
			await next();
			if (c.res.status !== 200) return;
			finished = JSON.stringify(finishDocument(await c.res.json()));
		}
		c.res = c.body(finished, 200, { "Content-Type": "application/json" });
	};
}
