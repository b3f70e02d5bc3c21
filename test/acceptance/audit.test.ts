/**
 * Black-box checks of the audit log (docs/audit-log.md): one record per change with its actor, action, resource,
 * request id and changes; nothing for refused requests or replays; admin-only reads, filters and cursors.
 */
import { describe, expect, it } from "vitest";
import {
	ADMIN_KEY,
	createAccount,
	createAgent,
	createKey,
	del,
	expectError,
	get,
	patch,
	post,
} from "../helpers";
import { currentPeriod, customer, generateOne } from "../invoicing/fixtures";

interface AuditRecord {
	id: string;
	at: string;
	actor: { type: string; key_id: string | null; key_prefix: string | null };
	action: string;
	resource_type: string;
	resource_id: string;
	request_id: string;
	changes: Record<string, unknown[]>;
}

async function recordsFor(resourceId: string, key = ADMIN_KEY): Promise<AuditRecord[]> {
	const r = await get(`/v1/audit-log?resource_id=${resourceId}&limit=100`, { key });
	expect(r.status, JSON.stringify(r.body)).toBe(200);
	return r.body.records;
}

async function keyWithId(kind: "admin" | "read-write") {
	const r = await post("/v1/api-keys", { type: "api", permission: kind, name: `k-${kind}` });
	expect(r.status).toBe(201);
	return r.body as { id: string; key: string; prefix: string };
}

describe("audit records", () => {
	it("api_key.created and api_key.revoked: the new key's id, the request's X-Request-Id, no key material", async () => {
		const created = await post("/v1/api-keys", { type: "api", permission: "read-only", name: "ci" });
		expect(created.status).toBe(201);
		const [record] = await recordsFor(created.body.id);
		expect(record).toMatchObject({
			action: "api_key.created",
			resource_type: "api_key",
			resource_id: created.body.id,
			request_id: created.headers.get("X-Request-Id"),
			actor: { type: "operator", key_id: null },
		});
		expect(record?.id).toEqual(expect.any(String));
		expect(record?.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
		expect(record?.changes.name).toEqual(["ci"]);
		expect(record?.changes.name?.at(-1)).toBe("ci");
		const text = JSON.stringify(record);
		expect(text).not.toContain(created.body.key);
		expect(text).not.toMatch(/hash/i);
		expect(record?.changes).not.toHaveProperty("key");

		const admin = await keyWithId("admin");
		const revoked = await del(`/v1/api-keys/${created.body.id}`, { key: admin.key });
		expect(revoked.status).toBe(204);
		const records = await recordsFor(created.body.id);
		expect(records).toHaveLength(2);
		expect(records[0]).toMatchObject({
			action: "api_key.revoked",
			resource_type: "api_key",
			resource_id: created.body.id,
			request_id: revoked.headers.get("X-Request-Id"),
			actor: { type: "api_key", key_id: admin.id, key_prefix: admin.prefix },
		});
	});

	it("agent.updated carries [before, after]; subscription.updated and invoice.paid are recorded", async () => {
		const rw = await keyWithId("read-write");
		const agent = await createAgent(rw.key, { name: "Before" });
		const changed = await patch(`/v1/agents/${agent.id}`, { name: "After" }, { key: rw.key });
		expect(changed.status).toBe(200);
		const [updated, createdRecord] = await recordsFor(agent.id);
		expect(createdRecord?.action).toBe("agent.created");
		expect(updated).toMatchObject({
			action: "agent.updated",
			resource_type: "agent",
			resource_id: agent.id,
			request_id: changed.headers.get("X-Request-Id"),
			actor: { type: "api_key", key_id: rw.id, key_prefix: rw.prefix },
			changes: { name: ["Before", "After"] },
		});

		const { account, subscription } = await customer({ base_fee: 10, charges: [] });
		const sub = await patch(`/v1/subscriptions/${subscription.id}`, { agent_instance_ids: ["audit-bot-2"] });
		expect(sub.status, JSON.stringify(sub.body)).toBe(200);
		expect((await recordsFor(subscription.id))[0]).toMatchObject({
			action: "subscription.updated",
			resource_type: "subscription",
			resource_id: subscription.id,
		});
		const invoice = await generateOne(currentPeriod(), account.id);
		const paid = await post(`/v1/invoices/${invoice.id}/pay`, { reference: "wire-1" });
		expect(paid.status).toBe(200);
		const invoiceRecords = await recordsFor(invoice.id);
		expect(invoiceRecords.map((r) => r.action)).toContain("invoice.paid");
		expect(invoiceRecords.find((r) => r.action === "invoice.paid")?.request_id).toBe(
			paid.headers.get("X-Request-Id"),
		);
	});

	it("are not written for refused requests nor for idempotent replays", async () => {
		const before = (await get("/v1/audit-log?limit=1")).body.records[0]?.id;
		expectError(await post("/v1/agents", { name: "", type: "custom" }), 400, "validation_error");
		expectError(
			await post("/v1/agents", { name: "x", type: "custom" }, { key: await createKey("read-only") }),
			403,
			"forbidden",
		);
		expect((await get("/v1/audit-log?limit=1")).body.records[0]?.id).not.toBe(before); // createKey wrote one
		const last = (await get("/v1/audit-log?limit=1")).body.records[0]?.id;
		const account = await createAccount(ADMIN_KEY, { external_id: `ext-${crypto.randomUUID()}` });
		const dup = await post("/v1/accounts", {
			name: "B",
			email: "b@b.test",
			external_id: (await get(`/v1/accounts/${account.id}`)).body.external_id,
		});
		expectError(dup, 409, "conflict");
		const afterConflict = await get("/v1/audit-log?limit=2");
		expect(afterConflict.body.records[0].resource_id).toBe(account.id);
		expect(afterConflict.body.records[1].id).toBe(last);

		const headers = { "Idempotency-Key": `audit-${crypto.randomUUID()}` };
		const first = await post("/v1/agents", { name: "Once", type: "custom" }, { headers });
		const again = await post("/v1/agents", { name: "Once", type: "custom" }, { headers });
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(await recordsFor(first.body.id)).toHaveLength(1);
	});

	it("keep portal tokens and webhook secrets out", async () => {
		const account = await createAccount();
		const s = await post(`/v1/accounts/${account.id}/portal-sessions`, {});
		expect(s.status).toBe(201);
		const hook = await post("/v1/webhooks", {
			url: "https://hooks.example.com/in/abc?sig=zzz",
			events: ["invoice.created"],
		});
		expect(hook.status, JSON.stringify(hook.body)).toBe(201);
		const all = JSON.stringify((await get("/v1/audit-log?limit=100")).body.records);
		expect(all).not.toContain(s.body.token);
		expect(all).not.toContain(s.body.token.slice(4));
		expect(all).not.toContain(hook.body.secret);
		expect(all).not.toContain("sig=zzz");
		const [session] = await recordsFor(s.body.id);
		expect(session?.resource_id).toBe(s.body.id);
	});
});

describe("audit changes", () => {
	it("show money as JSON numbers and statuses as the API names them", async () => {
		const { account, subscription } = await customer({ base_fee: 12.5, charges: [] });
		const grant = await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 2.25 });
		expect(grant.status).toBe(201);
		expect((await recordsFor(grant.body.id))[0]?.changes.amount).toEqual([2.25]);
		const agent = await createAgent();
		const cost = await post("/v1/costs", {
			agent_id: agent.id,
			cost_type: "gpu",
			amount: 7.5,
			period: currentPeriod(),
		});
		expect(cost.status, JSON.stringify(cost.body)).toBe(201);
		expect((await recordsFor(cost.body.id))[0]?.changes.amount).toEqual([7.5]);
		const alert = await post("/v1/alerts", { subscription_id: subscription.id, threshold: 100.5 });
		expect(alert.status, JSON.stringify(alert.body)).toBe(201);
		expect((await recordsFor(alert.body.id))[0]?.changes.threshold).toEqual([100.5]);
		const invoice = await generateOne(currentPeriod(), account.id);
		const created = (await recordsFor(invoice.id)).find((r) => r.action === "invoice.created");
		expect(created?.changes.amount).toEqual([invoice.amount]);
		expect(created?.changes.credits_applied).toEqual([invoice.credits_applied]);

		const other = await createAccount();
		const spare = await post(`/v1/accounts/${other.id}/credit-grants`, { amount: 5 });
		expect((await post(`/v1/accounts/${other.id}/credit-grants/${spare.body.id}/void`, {})).status).toBe(200);
		const voided = (await recordsFor(spare.body.id)).find((r) => r.action === "credit_grant.voided");
		expect(voided?.changes.status).toEqual(["active", "void"]);
	});
});

describe("GET /v1/audit-log", () => {
	it("is for admin keys only", async () => {
		for (const kind of ["read-only", "read-write", "sdk"] as const) {
			expectError(await get("/v1/audit-log", { key: await createKey(kind) }), 403, "forbidden");
		}
		expectError(await get("/v1/audit-log", { key: null }), 401, "unauthorized");
		expect((await get("/v1/audit-log", { key: await createKey("admin") })).status).toBe(200);
	});

	it("validates limit and cursor; default 20; no route changes records", async () => {
		for (const q of [
			"limit=0",
			"limit=101",
			"limit=abc",
			"limit=1e1",
			"cursor=not-a-cursor",
			"limit=5&limit=6",
			"start_date=yesterday",
		]) {
			expectError(await get(`/v1/audit-log?${q}`), 400, "validation_error");
		}
		for (let i = 0; i < 22; i++) await createAgent();
		const page = await get("/v1/audit-log");
		expect(page.body.records).toHaveLength(20);
		expect(Object.keys(page.body).sort()).toEqual(["next_cursor", "records"]);
		expect(typeof page.body.next_cursor).toBe("string");
		for (const method of ["POST", "PATCH", "DELETE", "PUT"]) {
			const r = await (method === "POST"
				? post("/v1/audit-log", {})
				: method === "PATCH"
					? patch("/v1/audit-log", {})
					: del("/v1/audit-log"));
			expect([404, 405]).toContain(r.status);
			if (method !== "PUT") break;
		}
		expect([404, 405]).toContain((await del(`/v1/audit-log/${page.body.records[0].id}`)).status);
		expect((await get("/v1/audit-log")).body.records[0].id).toBe(page.body.records[0].id);
	});

	it("is newest first; a cursor continues after its page, unmoved by new records; null on the last page", async () => {
		const seen: string[] = [];
		for (let i = 0; i < 7; i++) seen.push((await createAgent(ADMIN_KEY, { name: `page-${i}` })).id);
		const p1 = await get("/v1/audit-log?action=agent.created&limit=5");
		const ids1 = p1.body.records.map((r: AuditRecord) => r.resource_id);
		expect(ids1.slice(0, 5)).toEqual(seen.slice(2).reverse());
		for (const r of p1.body.records) expect(r.action).toBe("agent.created");
		const sorted = [...p1.body.records].sort((a: AuditRecord, b: AuditRecord) =>
			a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1,
		);
		expect(sorted).toEqual(p1.body.records);
		await createAgent(ADMIN_KEY, { name: "meanwhile" });
		const p2 = await get(
			`/v1/audit-log?action=agent.created&limit=5&cursor=${encodeURIComponent(p1.body.next_cursor)}`,
		);
		expect(p2.body.records[0].resource_id).toBe(seen[1]);
		expect(p2.body.records.map((r: AuditRecord) => r.resource_id)).not.toContain(ids1[0]);
		let cursor = p2.body.next_cursor;
		let guard = 0;
		while (cursor !== null && guard++ < 100) {
			const next = await get(
				`/v1/audit-log?action=agent.created&limit=100&cursor=${encodeURIComponent(cursor)}`,
			);
			expect(next.status).toBe(200);
			cursor = next.body.next_cursor;
		}
		expect(cursor).toBeNull();
		const exact = await get(`/v1/audit-log?resource_id=${seen[0]}`);
		expect(exact.body.records).toHaveLength(1);
		expect(exact.body.next_cursor).toBeNull();
	});

	it("filters by key_id, action and dates", async () => {
		const rw = await keyWithId("read-write");
		const agent = await createAgent(rw.key);
		const byKey = await get(`/v1/audit-log?key_id=${rw.id}`);
		expect(byKey.body.records.map((r: AuditRecord) => r.resource_id)).toEqual([agent.id]);
		const today = new Date().toISOString().slice(0, 10);
		const inDay = await get(`/v1/audit-log?key_id=${rw.id}&start_date=${today}&end_date=${today}`);
		expect(inDay.body.records).toHaveLength(1);
		const before = await get(`/v1/audit-log?key_id=${rw.id}&end_date=2020-01-01`);
		expect(before.body.records).toHaveLength(0);
		expect(before.body.next_cursor).toBeNull();
		const testAdmin = await createKey("admin", "test");
		expect(
			(await get(`/v1/audit-log?resource_id=${agent.id}`, { key: testAdmin })).body.records,
		).toHaveLength(0);
	});
});

describe("audit cursors under concurrent writes", () => {
	it("never repeat a record nor show one written after the walk began", async () => {
		for (let i = 0; i < 12; i++) await createAgent(ADMIN_KEY, { name: `walk-${i}` });
		const first = await get("/v1/audit-log?limit=4");
		const startedWith = new Set<string>(first.body.records.map((r: AuditRecord) => r.id));
		const seen: AuditRecord[] = [...first.body.records];
		let cursor: string | null = first.body.next_cursor;
		const written: string[] = [];
		for (let page = 0; page < 3 && cursor !== null; page++) {
			const made = await Promise.all(
				Array.from({ length: 5 }, () => createAgent(ADMIN_KEY, { name: "meanwhile" })),
			);
			written.push(...made.map((a) => a.id));
			const next = await get(`/v1/audit-log?limit=4&cursor=${encodeURIComponent(cursor)}`);
			expect(next.status).toBe(200);
			seen.push(...next.body.records);
			cursor = next.body.next_cursor;
		}
		const ids = seen.map((r) => r.id);
		expect(new Set(ids).size).toBe(ids.length);
		for (const r of seen) expect(written).not.toContain(r.resource_id);
		expect(startedWith.size).toBe(4);
		for (let i = 1; i < seen.length; i++) {
			const [a, b] = [seen[i - 1] as AuditRecord, seen[i] as AuditRecord];
			expect(a.at > b.at || (a.at === b.at && a.id > b.id)).toBe(true);
		}
	});
});
