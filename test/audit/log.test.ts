/** GET /v1/audit-log: admin only, newest first, filters, and a cursor that later writes never disturb. */
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, call, createAccount, createKey, expectError, get, post } from "../helpers";
import { mint } from "../portal/fixtures";
import { recordsOf } from "./fixtures";

async function agents(n: number, key: string = ADMIN_KEY): Promise<string[]> {
	const ids: string[] = [];
	for (let i = 0; i < n; i++) {
		const response = await post("/v1/agents", { name: `Agent ${i}`, type: "custom" }, { key });
		ids.push(response.body.id);
	}
	return ids;
}

async function page(query: string, key: string = ADMIN_KEY) {
	const response = await get(`/v1/audit-log${query}`, { key });
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body as {
		records: { id: string; at: string; resource_id: string; action: string }[];
		next_cursor: string | null;
	};
}

describe("GET /v1/audit-log", () => {
	it("answers records newest first (at, then id), 20 by default, in the documented shape", async () => {
		const ids = await agents(3);
		const body = await page("");
		expect(body.records.length).toBeLessThanOrEqual(20);
		expect(body.records.slice(0, 3).map((r) => r.resource_id)).toEqual([...ids].reverse());
		expect(body.records[0]).toEqual({
			id: expect.stringMatching(/^aud_/),
			at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
			actor: { type: "operator", key_id: null, key_prefix: expect.stringMatching(/^sk_api_.{6}…$/) },
			action: "agent.created",
			resource_type: "agent",
			resource_id: ids[2],
			request_id: expect.any(String),
			changes: { name: ["Agent 2"], type: ["custom"], description: [null] },
		});
		const sorted = [...body.records].sort((a, b) =>
			a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1,
		);
		expect(body.records).toEqual(sorted);
	});

	it("is for admin keys only: 403 for read-write, read-only and SDK keys, 401 for a portal token", async () => {
		for (const kind of ["read-write", "read-only", "sdk"] as const) {
			expectError(await get("/v1/audit-log", { key: await createKey(kind) }), 403, "forbidden");
		}
		const session = await mint((await createAccount()).id);
		expectError(await get("/v1/audit-log", { key: session.token }), 401, "unauthorized");
		expectError(await get("/v1/audit-log", { key: null }), 401, "unauthorized");
		const admin = await createKey("admin");
		expect((await get("/v1/audit-log", { key: admin })).status).toBe(200);
	});

	it("keeps environments apart", async () => {
		const testAdmin = await createKey("admin", "test");
		const [testAgent] = await agents(1, testAdmin);
		const live = await page(`?resource_id=${testAgent}`);
		expect(live.records).toEqual([]);
		const test = await page(`?resource_id=${testAgent}`, testAdmin);
		expect(test.records.map((r) => r.action)).toEqual(["agent.created"]);
	});

	it("pages with a cursor that continues right after its last record, whatever is written meanwhile", async () => {
		const key = await createKey("admin");
		const keyId = (await recordsOf()).at(-1)?.resource_id as string;
		const written = await agents(25, key);
		const seen: string[] = [];
		let cursor: string | null = null;
		let pages = 0;
		do {
			const body = await page(
				`?key_id=${keyId}&limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
			);
			seen.push(...body.records.map((r) => r.resource_id));
			cursor = body.next_cursor;
			pages++;
			// Writes between pages, by the same key, come before the first page: never on a later one.
			await agents(2, key);
		} while (cursor !== null);
		expect(pages).toBe(3);
		expect(seen).toEqual([...written].reverse());
		// Concurrent writes while paging.
		const first = await page(`?key_id=${keyId}&limit=5`);
		const [, second] = await Promise.all([
			agents(5, key),
			page(`?key_id=${keyId}&limit=5&cursor=${encodeURIComponent(first.next_cursor as string)}`),
		]);
		const firstIds = first.records.map((r) => r.id);
		expect(second.records.map((r) => r.id).some((id) => firstIds.includes(id))).toBe(false);
		expect(second.records.every((r) => r.id < (firstIds.at(-1) as string))).toBe(true);
	});

	it("filters by resource_id, key_id, action and dates", async () => {
		const key = await createKey("read-write");
		const keyId = (await recordsOf()).at(-1)?.resource_id as string;
		const [agent] = await agents(1, key);
		await call("PATCH", `/v1/agents/${agent}`, { key, body: { name: "Renamed" } });
		expect((await page(`?resource_id=${agent}`)).records.map((r) => r.action)).toEqual([
			"agent.updated",
			"agent.created",
		]);
		expect((await page(`?key_id=${keyId}`)).records.map((r) => r.resource_id)).toEqual([agent, agent]);
		expect((await page(`?key_id=${keyId}&action=agent.updated`)).records).toHaveLength(1);
		expect((await page("?action=api_key.created&limit=100")).records.map((r) => r.resource_id)).toContain(
			keyId,
		);
		const today = new Date().toISOString().slice(0, 10);
		expect((await page(`?resource_id=${agent}&start_date=${today}&end_date=${today}`)).records).toHaveLength(
			2,
		);
		expect((await page(`?resource_id=${agent}&end_date=2020-01-01`)).records).toEqual([]);
		expect((await page(`?resource_id=${agent}&start_date=2999-01-01T00:00:00Z`)).records).toEqual([]);
		// Bounds past the years ISO text can sort (0000–9999) still mean what they say.
		expect((await page(`?resource_id=${agent}&start_date=9999-12-31T23:00:00-05:00`)).records).toEqual([]);
		expect((await page(`?resource_id=${agent}&end_date=0000-01-01T00:00:00%2B01:00`)).records).toEqual([]);
		expect((await page(`?resource_id=${agent}&start_date=0000-01-01T00:00:00%2B01:00`)).records).toHaveLength(
			2,
		);
		expect((await page(`?resource_id=${agent}&end_date=9999-12-31T23:00:00-05:00`)).records).toHaveLength(2);
		expect((await page(`?resource_id=${agent}&limit=1`)).next_cursor).not.toBeNull();
		expect((await page(`?resource_id=${agent}&limit=2`)).next_cursor).toBeNull();
	});

	it.each([
		"?limit=0",
		"?limit=101",
		"?limit=1e1",
		"?limit=5&limit=6",
		"?cursor=nonsense",
		"?cursor=YTEuMA",
		"?start_date=yesterday",
		"?start_date=2026-11-02&end_date=2026-11-01",
		"?action=Agent%20created",
		"?colour=red",
	])("refuses %s (400)", async (query) => {
		expectError(await get(`/v1/audit-log${query}`), 400, "validation_error");
	});

	it("has no route that changes or deletes a record", async () => {
		const document = (await get("/v1/openapi.json", { key: null })).body as {
			paths: Record<string, Record<string, unknown>>;
		};
		const auditPaths = Object.entries(document.paths).filter(([path]) => path.includes("audit"));
		expect(auditPaths.map(([path, operations]) => [path, Object.keys(operations)])).toEqual([
			["/v1/audit-log", ["get"]],
		]);
		const [record] = (await page("?limit=1")).records;
		for (const method of ["POST", "PATCH", "DELETE", "PUT"]) {
			expectError(await call(method, "/v1/audit-log", { body: {} }), 405, "method_not_allowed");
			expectError(await call(method, `/v1/audit-log/${record?.id}`, { body: {} }), 404, "not_found");
		}
		expect((await page("?limit=1")).records[0]).toEqual(record);
	});
});
