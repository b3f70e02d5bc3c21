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
import { CURRENCY, withExample } from "./openapi-examples";
import {
	accessText,
	HEADERS,
	IDEMPOTENCY_KEY,
	isPublic,
	PORTAL_ACCESS,
	ref,
	responseHeaders,
} from "./openapi-headers";
import { type Access, routeAccess } from "./permissions";

export { exampleOf } from "./openapi-examples";

// biome-ignore lint/suspicious/noExplicitAny: a generated JSON document, walked generically
type J = any;

const TAG_DESCRIPTIONS: Record<string, string> = {
	"API keys": "SDK keys for agents and API keys for back offices (admin only).",
	Agents: "Agents and the instance keys their deployments send events with.",
	Accounts: "The customers who are billed.",
	Pricing: "Rate plans and what-if pricing.",
	Coupons: "Percentages or amounts off, and the discounts that apply them to subscriptions.",
	Subscriptions:
		"An account on a rate plan, with the agent instances it pays for; a hot one may be counted in shards (set at creation).",
	Metering: "Actions and outcomes sent by agents (SDK keys), and usage so far.",
	Invoices: "Monthly invoices, their payment and voiding.",
	Costs: "What running the agents cost: recorded from events or entered by hand.",
	Reports: "Revenue and profit and loss.",
	Webhooks: "Signed notifications of what happened, their delivery log and tests.",
	Alerts:
		"Thresholds on usage or spend that notify, or block further events, and the entitlements they leave.",
	Reservations:
		"Budget holds: an agent reserves what a step may cost before running it; the event settles the hold.",
	Credits: "Prepaid credit grants of an account, their ledger and balance.",
	"Credit notes": "Corrections of an issued invoice: off what is due, refunded, or given back as credit.",
	Events: "The raw metering events: explore and export them.",
	Health: "Whether the service is up; no key needed.",
	"Customer portal":
		"What an account's own customer portal reads, with the portal token of a link minted for that account.",
	"Exchange rates":
		"Rates between currencies with effective times, for invoices in another currency than their plan.",
	"Model prices":
		"What LLM tokens cost per model: the catalog that ships with the service and this environment's own prices.",
};

const METHODS = ["get", "put", "post", "patch", "delete"];

/** Every operation of the document with its method and path. */
export function operationsOf(doc: J): { method: string; path: string; operation: J }[] {
	return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
		METHODS.filter((m) => (item as J)[m]).map((method) => ({ method, path, operation: (item as J)[method] })),
	);
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
