/**
 * fast-check arbitraries from the JSON schemas of the OpenAPI document: values a schema describes (valid
 * requests, as far as a schema alone can say), and the classic bad values to break them with.
 */
import fc from "fast-check";

export type JsonSchema = {
	$ref?: string;
	type?: string | string[];
	enum?: unknown[];
	const?: unknown;
	anyOf?: JsonSchema[];
	oneOf?: JsonSchema[];
	allOf?: JsonSchema[];
	properties?: Record<string, JsonSchema>;
	required?: string[];
	items?: JsonSchema;
	minItems?: number;
	maxItems?: number;
	minLength?: number;
	maxLength?: number;
	minimum?: number;
	maximum?: number;
	exclusiveMinimum?: number;
	pattern?: string;
	format?: string;
	default?: unknown;
	example?: unknown;
};

export type Components = Record<string, JsonSchema>;

export function resolve(schema: JsonSchema, components: Components): JsonSchema {
	let current = schema;
	for (let i = 0; current.$ref && i < 20; i++) {
		current = components[current.$ref.replace("#/components/schemas/", "")] ?? {};
	}
	return current;
}

const isoDate = fc
	.date({ min: new Date(Date.now() - 20 * 86_400_000), max: new Date(), noInvalidDate: true })
	.map((d) => d.toISOString());

/** Values of `schema`, at most `depth` levels deep. */
export function arbitraryOf(schema: JsonSchema, components: Components, depth = 0): fc.Arbitrary<unknown> {
	const s = resolve(schema, components);
	if (depth > 6) return fc.constant(null);
	if (s.const !== undefined) return fc.constant(s.const);
	if (s.enum) return fc.constantFrom(...s.enum);
	const union = s.anyOf ?? s.oneOf;
	if (union?.length) return fc.oneof(...union.map((u) => arbitraryOf(u, components, depth + 1)));
	if (s.allOf?.length) return arbitraryOf(s.allOf[0] as JsonSchema, components, depth + 1);
	const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
	if (types.length > 1)
		return fc.oneof(...types.map((type) => arbitraryOf({ ...s, type }, components, depth)));
	const example = s.example !== undefined ? [fc.constant(s.example)] : [];
	switch (types[0]) {
		case "string": {
			if (s.format === "date-time") return fc.oneof(isoDate, ...example);
			if (s.pattern) {
				try {
					return fc.oneof(
						fc.stringMatching(new RegExp(s.pattern)).filter((x) => x.length <= (s.maxLength ?? 300)),
						...example,
					);
				} catch {}
			}
			return fc.oneof(
				fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 30, 30) }),
				...example,
			);
		}
		case "integer":
			return fc.integer({ min: Math.max(s.minimum ?? -1000, -1e6), max: Math.min(s.maximum ?? 1e6, 1e6) });
		case "number": {
			const min = s.exclusiveMinimum ?? s.minimum ?? -1e6;
			return fc.oneof(fc.double({ min, max: Math.min(s.maximum ?? 1e6, 1e15), noNaN: true }), ...example);
		}
		case "boolean":
			return fc.boolean();
		case "null":
			return fc.constant(null);
		case "array":
			return fc.array(arbitraryOf(s.items ?? {}, components, depth + 1), {
				minLength: s.minItems ?? 0,
				maxLength: Math.min(s.maxItems ?? 3, 3),
			});
		default: {
			// "object", or no type at all
			if (!s.properties) return fc.constant({});
			const required = new Set(s.required ?? []);
			const fields = Object.fromEntries(
				Object.entries(s.properties).map(([name, property]) => [
					name,
					arbitraryOf(property, components, depth + 1),
				]),
			);
			return fc.record(fields, { requiredKeys: [...required].filter((k) => k in fields) });
		}
	}
}

/** Deeply nested arrays: a parser or validator that recurses must not fall over. */
const deep = (levels: number): unknown => {
	let value: unknown = 1;
	for (let i = 0; i < levels; i++) value = [value];
	return value;
};

export const BAD_VALUES: unknown[] = [
	1e308,
	-1e308,
	1e16,
	-1e16,
	5e-324,
	-0,
	0.1 + 0.2,
	2 ** 53 + 1,
	"NaN",
	"Infinity",
	"-0",
	"1e2",
	"x".repeat(10_000),
	"a\u0000b",
	"\u202e\ud800",
	"",
	" ",
	true,
	false,
	null,
	[],
	{},
	[1, "2", null],
	{ nested: { deeper: { deepest: "x" } } },
	deep(200),
	"2026-02-30T25:61:00Z",
	"__proto__",
];

export const BAD_QUERY_VALUES: string[] = [
	"1e2",
	"-0",
	"NaN",
	"+5",
	"0x10",
	"5.0",
	" 5",
	"x".repeat(10_000),
	"a\u0000b",
	"-1",
	"99999999999999999999999",
	"",
	"2026-13-45",
];
