import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createAccount, createKey, post } from "../helpers";
import { dbFingerprint } from "../support/db-state";
import {
	arbitraryOf,
	BAD_QUERY_VALUES,
	BAD_VALUES,
	type Components,
	type JsonSchema,
	resolve,
} from "./schema-arbitrary";

// Walks /v1/openapi.json and sends every operation generated valid requests and invalid ones (bad values in each
// field, extra fields, wrong types, bad query and path values). Whatever it sends: never a 5xx, every error has the
// contract's shape with the request id, and a refused request changes nothing in D1. Operations added later are
// fuzzed too, since the test reads the document. The seed is printed with any failure; to replay it, put it in
// place of the SEED expression below.

const BASE = "https://billing.test";
const SEED = Date.now() % 2 ** 31;
const VALID_RUNS = 4;
const INVALID_RUNS = 8;

interface Operation {
	method: string;
	path: string;
	parameters: { name: string; in: "query" | "path" | "header"; required?: boolean; schema?: JsonSchema }[];
	body?: JsonSchema;
}

interface Probe {
	path: string;
	query: [string, string][];
	body?: string;
	label: string;
}

const document = (await (await exports.default.fetch(new Request(`${BASE}/v1/openapi.json`))).json()) as {
	paths: Record<
		string,
		Record<
			string,
			{
				parameters?: Operation["parameters"];
				requestBody?: { content?: Record<string, { schema: JsonSchema }> };
			}
		>
	>;
	components?: { schemas?: Components };
};
const components: Components = document.components?.schemas ?? {};
const operations: Operation[] = Object.entries(document.paths).flatMap(([path, methods]) =>
	Object.entries(methods)
		.filter(([method]) => ["get", "post", "patch", "put", "delete"].includes(method))
		.map(([method, op]) => ({
			method: method.toUpperCase(),
			path,
			parameters: op.parameters ?? [],
			body: op.requestBody?.content?.["application/json"]?.schema,
		})),
);

function sample<T>(arbitrary: fc.Arbitrary<T>, runs: number, salt: number): T[] {
	return fc.sample(arbitrary, { numRuns: runs, seed: SEED + salt });
}

/** A path segment; a lone surrogate cannot be percent-encoded, so it becomes U+FFFD. */
function segment(value: string): string {
	return encodeURIComponent(value.replace(/[\ud800-\udfff]/g, "\ufffd"));
}

function pathWith(op: Operation, values: Record<string, string> = {}): string {
	return op.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
		segment(values[name] ?? `${name}_fuzz_unknown`),
	);
}

const queryParameters = (op: Operation) => op.parameters.filter((p) => p.in === "query");

function validQuery(op: Operation, salt: number): [string, string][] {
	const out: [string, string][] = [];
	for (const [i, p] of queryParameters(op).entries()) {
		const schema = resolve(p.schema ?? {}, components);
		if (!p.required && salt % 2 === 0) continue;
		const [value] = sample(arbitraryOf(schema, components), 1, salt * 31 + i);
		if (value !== undefined && value !== null && typeof value !== "object") out.push([p.name, String(value)]);
	}
	return out;
}

/** Every JSON path of a value, so a bad value can be put at any of them. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
	const out: (string | number)[][] = [prefix];
	if (Array.isArray(value)) {
		for (const [i, v] of value.entries()) out.push(...pathsOf(v, [...prefix, i]));
	} else if (value && typeof value === "object") {
		for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
	}
	return out;
}

function replaceAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
	if (path.length === 0) return replacement;
	const copy = structuredClone(value) as Record<string | number, unknown>;
	let cursor = copy;
	for (const key of path.slice(0, -1)) cursor = cursor[key] as Record<string | number, unknown>;
	cursor[path[path.length - 1] as string | number] = replacement;
	return copy;
}

function probesFor(op: Operation, index: number): Probe[] {
	const probes: Probe[] = [];
	const salt = index * 1000;
	const bodies = op.body ? sample(arbitraryOf(op.body, components), VALID_RUNS, salt) : [undefined];
	for (const [i, body] of bodies.entries()) {
		probes.push({
			path: pathWith(op),
			query: validQuery(op, salt + i),
			body: body === undefined ? undefined : JSON.stringify(body),
			label: "valid",
		});
	}
	const picks = sample(fc.tuple(fc.nat(), fc.nat(), fc.nat()), INVALID_RUNS, salt + 500);
	for (const [i, [a, b, c]] of picks.entries()) {
		const bad = BAD_VALUES[a % BAD_VALUES.length];
		const badQuery = BAD_QUERY_VALUES[b % BAD_QUERY_VALUES.length] as string;
		const params = queryParameters(op);
		switch (i % 5) {
			case 0:
			case 1: {
				if (!op.body) break;
				const base = bodies[c % bodies.length];
				const paths = pathsOf(base);
				const at = paths[b % paths.length] ?? [];
				probes.push({
					path: pathWith(op),
					query: [],
					body: JSON.stringify(replaceAt(base, at, bad)),
					label: `bad value at ${at.join(".")}`,
				});
				continue;
			}
			case 2: {
				if (!op.body) break;
				const base = bodies[c % bodies.length];
				const extra =
					base && typeof base === "object" && !Array.isArray(base) ? { ...base, zz_extra_field: bad } : bad;
				probes.push({ path: pathWith(op), query: [], body: JSON.stringify(extra), label: "extra field" });
				continue;
			}
			case 3: {
				if (params.length === 0) break;
				const p = params[c % params.length] as Operation["parameters"][number];
				probes.push({ path: pathWith(op), query: [[p.name, badQuery]], label: `bad query ${p.name}` });
				probes.push({
					path: pathWith(op),
					query: [
						[p.name, "1"],
						[p.name, "2"],
					],
					label: `repeated ${p.name}`,
				});
				continue;
			}
		}
		// otherwise: bad path parameters, an unknown query parameter, or a body that is not JSON
		const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
		if (names.length > 0) {
			probes.push({
				path: pathWith(
					op,
					Object.fromEntries(names.map((n) => [n, typeof bad === "string" ? bad : JSON.stringify(bad)])),
				),
				query: [],
				label: "bad path parameter",
			});
		} else if (op.body) {
			probes.push({
				path: pathWith(op),
				query: [],
				body: `{"unterminated": ${JSON.stringify(badQuery)}`,
				label: "invalid JSON",
			});
		} else {
			probes.push({
				path: pathWith(op),
				query: [["zz_unknown", badQuery]],
				label: "unknown query parameter",
			});
		}
	}
	return probes;
}

async function portalToken(): Promise<string> {
	const account = await createAccount();
	const session = await post(`/v1/accounts/${account.id}/portal-sessions`, {});
	expect(session.status).toBe(201);
	return session.body.token as string;
}

async function send(op: Operation, probe: Probe, key: string) {
	const url = new URL(`${BASE}${probe.path}`);
	for (const [name, value] of probe.query) url.searchParams.append(name, value);
	const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
	if (probe.body !== undefined) headers["Content-Type"] = "application/json";
	const response = await exports.default.fetch(
		new Request(url, { method: op.method, headers, body: probe.body }),
	);
	const text = await response.text();
	return { status: response.status, headers: response.headers, text };
}

beforeAll(() => {
	// Webhook endpoints the fuzzer creates get deliveries: answer them here instead of the network.
	vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
});
afterAll(() => vi.restoreAllMocks());

describe(`fuzzing every operation of the OpenAPI document (seed ${SEED})`, () => {
	it("finds operations to fuzz", () => {
		expect(operations.length).toBeGreaterThan(30);
	});

	for (const [index, op] of operations.entries()) {
		it(`${op.method} ${op.path}: no 5xx, errors in the contract's shape, refusals change nothing`, async () => {
			// A key per operation, so the fuzzer never meets its own rate limit; the customer portal's operations
			// take a portal token instead (of a fresh account's session).
			const key = op.path.startsWith("/portal/api/") ? await portalToken() : await createKey("admin");
			for (const probe of probesFor(op, index)) {
				const before = await dbFingerprint();
				const response = await send(op, probe, key);
				const what = `seed ${SEED}, ${op.method} ${probe.path}?${new URLSearchParams(probe.query)} (${probe.label}) body ${probe.body?.slice(0, 200)} → ${response.status} ${response.text.slice(0, 300)}`;
				expect(response.status, what).toBeLessThan(500);
				if (response.status >= 400) {
					const body = JSON.parse(response.text);
					expect(typeof body.error?.code, what).toBe("string");
					expect(typeof body.error?.message, what).toBe("string");
					expect(body.error.request_id, what).toBe(response.headers.get("X-Request-Id"));
					expect(await dbFingerprint(), what).toEqual(before);
				}
			}
		});
	}
});
