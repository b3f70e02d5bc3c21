import { env, exports } from "cloudflare:workers";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_KEY, type ApiResponse, call, createAccount, createKey, post } from "../helpers";
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

// Writes that leave no audit record by design: events, reservations, and the simulation, which changes nothing.
const UNRECORDED = [
	/^\/v1\/(actions|outcomes)(\/batch)?$/,
	/\/reservations(\/|$)/,
	/^\/v1\/pricing\/simulate$/,
];

function recordsChanges(op: Operation): boolean {
	return op.method !== "GET" && op.path.startsWith("/v1/") && !UNRECORDED.some((p) => p.test(op.path));
}

/** The row count of the audit log in a fingerprint ("<rows>:<hash>"). */
const auditCount = (fingerprint: Record<string, string>) => Number(fingerprint.audit_records?.split(":")[0]);

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
				// A change made is recorded in the audit log, and only a change: a write that changed nothing (a
				// generation with nothing to bill), a read, or a portal call records nothing.
				if (response.status < 300 && before.audit_records !== undefined) {
					const after = await dbFingerprint();
					const changed = Object.keys(after).filter((t) => t !== "audit_records" && after[t] !== before[t]);
					const recorded = auditCount(after) - auditCount(before);
					if (recordsChanges(op) && changed.length > 0)
						expect(
							recorded,
							`${what}: changed ${changed.join(", ")} without an audit record`,
						).toBeGreaterThan(0);
					else expect(recorded, `${what}: an audit record without a change`).toBe(0);
				}
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

describe(`fuzzing the customer portal's credentials (seed ${SEED})`, () => {
	const portalOperations = operations.filter((op) => op.path.startsWith("/portal/api/"));

	it("finds the portal's operations", () => {
		expect(portalOperations.length).toBeGreaterThanOrEqual(4);
	});

	it("answers 401 to anything but a live portal token, and 404 for another account's ids", async () => {
		const revoked = await portalToken();
		const revokedId = (
			await env.DB.prepare("SELECT id FROM portal_sessions ORDER BY created_at DESC, id DESC LIMIT 1").first<{
				id: string;
			}>()
		)?.id;
		expect((await call("DELETE", `/v1/portal-sessions/${revokedId}`)).status).toBe(204);
		const keys = [ADMIN_KEY, await createKey("admin"), await createKey("read-only"), await createKey("sdk")];
		const credentials = fc.oneof(
			fc.constantFrom(...keys, revoked, "pst_", "pst_not-a-token", `${revoked}x`, revoked.toUpperCase()),
			fc.string({ maxLength: 80 }).map((s) => `pst_${s}`),
			fc.string({ maxLength: 80 }),
		);
		const samples = sample(fc.tuple(credentials, fc.nat(), fc.boolean()), 40, 7_000);
		for (const [credential, pick, bearer] of samples) {
			const op = portalOperations[pick % portalOperations.length] as Operation;
			const before = await dbFingerprint();
			const header = bearer ? `Bearer ${credential}` : credential;
			let response: Response;
			try {
				response = await exports.default.fetch(
					new Request(`${BASE}${pathWith(op)}`, { method: op.method, headers: { Authorization: header } }),
				);
			} catch {
				continue; // a header value fetch itself refuses (control characters) never reaches the Worker
			}
			const what = `seed ${SEED}, ${op.method} ${op.path} with Authorization ${JSON.stringify(header.slice(0, 40))}`;
			expect(response.status, what).toBe(401);
			const body = (await response.json()) as { error: { code: string; request_id: string } };
			expect(body.error.code, what).toBe("unauthorized");
			expect(body.error.request_id, what).toBe(response.headers.get("X-Request-Id"));
			expect(await dbFingerprint(), what).toEqual(before);
		}

		// A live token reaches only its own account: any other id is not found.
		const token = await portalToken();
		const ids = sample(fc.stringMatching(/^(inv|acct|pay)_[0-9a-z]{1,26}$/), 10, 7_500);
		for (const [i, id] of ids.entries()) {
			const op = portalOperations.filter((o) => o.path.includes("{"))[i % 2] as Operation | undefined;
			if (!op) continue;
			const path = op.path.replace(/\{[^}]+\}/, segment(id));
			const response = await exports.default.fetch(
				new Request(`${BASE}${path}`, { headers: { Authorization: `Bearer ${token}` } }),
			);
			expect(response.status, `seed ${SEED}, GET ${path}`).toBe(404);
		}
	});
});

describe(`fuzzing the audit log's pages (seed ${SEED})`, () => {
	it("walks any filter at any page size through every matching record once, newest first", async () => {
		const keys = [await createKey("admin"), await createKey("read-write")];
		const keyIds = (
			await env.DB.prepare(
				"SELECT resource_id FROM audit_records WHERE action = 'api_key.created' ORDER BY seq DESC LIMIT 2",
			).all<{
				resource_id: string;
			}>()
		).results.map((r) => r.resource_id);
		const agents: string[] = [];
		for (let i = 0; i < 12; i++) {
			const created = await call("POST", "/v1/agents", {
				key: keys[i % 2],
				body: { name: `Fuzz ${i}`, type: "custom" },
			});
			agents.push(created.body.id);
			if (i % 3 === 0)
				await call("PATCH", `/v1/agents/${created.body.id}`, { key: keys[1], body: { name: `F${i}` } });
		}
		const filters = fc.record(
			{
				resource_id: fc.constantFrom(...agents, "agt_none"),
				key_id: fc.constantFrom(...keyIds),
				action: fc.constantFrom("agent.created", "agent.updated", "api_key.created", "invoice.paid"),
			},
			{ requiredKeys: [] },
		);
		for (const [filter, limit, writeBetween] of sample(
			fc.tuple(filters, fc.integer({ min: 1, max: 7 }), fc.boolean()),
			15,
			8_000,
		)) {
			const where = Object.entries(filter)
				.map(([name]) => `${name} = ?`)
				.join(" AND ");
			const expected = (
				await env.DB.prepare(
					`SELECT id FROM audit_records WHERE environment = 'live'${where ? ` AND ${where}` : ""} ORDER BY at DESC, id DESC`,
				)
					.bind(...Object.values(filter))
					.all<{ id: string }>()
			).results.map((r) => r.id);
			const seen: string[] = [];
			let cursor: string | null = null;
			do {
				const query: URLSearchParams = new URLSearchParams({
					...filter,
					limit: String(limit),
					...(cursor ? { cursor } : {}),
				});
				const response: ApiResponse = await call("GET", `/v1/audit-log?${query}`);
				const what = `seed ${SEED}, /v1/audit-log?${query}`;
				expect(response.status, what).toBe(200);
				expect(response.body.records.length, what).toBeLessThanOrEqual(limit);
				seen.push(...response.body.records.map((r: { id: string }) => r.id));
				cursor = response.body.next_cursor;
				// Records written while paging land before the first page, never on the pages still to come.
				if (writeBetween)
					await call("POST", "/v1/agents", { key: keys[0], body: { name: "Meanwhile", type: "custom" } });
			} while (cursor !== null && seen.length <= expected.length);
			expect(seen, `seed ${SEED}, ${JSON.stringify(filter)} limit ${limit}`).toEqual(expected);
		}
	});
});
