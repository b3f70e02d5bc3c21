/**
 * Examples for bodies that have none, composed from the schema (see exampleOf), for openapi-document.ts.
 */

// biome-ignore lint/suspicious/noExplicitAny: a generated JSON document, walked generically
type J = any;

export const CURRENCY = /(^|_)currency$/;

function resolve(doc: J, schema: J): J {
	let s = schema;
	for (let i = 0; i < 10 && s?.$ref; i++)
		s = doc.components?.schemas?.[String(s.$ref).split("/").pop() ?? ""];
	return s;
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

export function withExample(doc: J, content: J) {
	for (const [type, media] of Object.entries(content ?? {})) {
		if (!isJson(type)) continue;
		const m = media as J;
		if (m.schema && m.example === undefined && m.examples === undefined) m.example = exampleOf(doc, m.schema);
	}
}
