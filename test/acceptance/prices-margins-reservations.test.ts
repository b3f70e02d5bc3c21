/**
 * Black-box acceptance checks of prices, margins and reservations, written from the documented behaviour only:
 * model prices and costing (docs/model-prices.md), cost-plus, live margins and margin alerts (docs/margins.md),
 * budget reservations (docs/reservations.md) and the MCP endpoint (docs/mcp.md). Everything goes through the
 * Worker's fetch handler.
 */
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, call, createKey, del, expectError, get, post } from "../helpers";
import { currentPeriod, customer, instanceKey, sdkKey, shiftPeriod } from "../invoicing/fixtures";
import { exactSum, flush } from "../reports/fixtures";

const DAY = 86_400_000;
const uid = () => crypto.randomUUID().slice(0, 8);

const callsPlan = {
	base_fee: 10,
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "per_unit",
			unit_price: 0.01,
		},
	],
};

describe("model prices", () => {
	it("fills the defaults and answers the documented shape", async () => {
		const model = `acc-${uid()}`;
		const response = await post("/v1/model-prices", {
			provider: "acme",
			model,
			input_per_million: 3,
			output_per_million: 15,
		});
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(Object.keys(response.body).sort()).toEqual(
			[
				"id",
				"provider",
				"model",
				"currency",
				"input_per_million",
				"output_per_million",
				"cached_input_per_million",
				"reasoning_per_million",
				"per_request",
				"effective_from",
				"origin",
				"created_at",
			].sort(),
		);
		expect(response.body).toMatchObject({
			provider: "acme",
			model,
			currency: "USD",
			input_per_million: 3,
			output_per_million: 15,
			cached_input_per_million: 3,
			reasoning_per_million: 15,
			per_request: 0,
			origin: "custom",
		});
		expect(response.body.id).toMatch(/^mpr_/);
		expect(response.body.effective_from).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
	});

	it("takes effective_from up to 35 days back, not 36; in the future too", async () => {
		const base = { provider: "acme", model: `acc-${uid()}`, input_per_million: 1 };
		const ok = await post("/v1/model-prices", {
			...base,
			effective_from: new Date(Date.now() - 35 * DAY + 60_000).toISOString(),
		});
		expect(ok.status, JSON.stringify(ok.body)).toBe(201);
		const future = await post("/v1/model-prices", {
			...base,
			effective_from: new Date(Date.now() + 10 * DAY).toISOString(),
		});
		expect(future.status, JSON.stringify(future.body)).toBe(201);
		const tooOld = await post("/v1/model-prices", {
			...base,
			effective_from: new Date(Date.now() - 36 * DAY).toISOString(),
		});
		const error = expectError(tooOld, 400, "validation_error");
		expect(error.details?.[0]?.path).toBe("effective_from");
	});

	it("refuses negative, over-precise, upper-case and unknown inputs with 400 and stores nothing", async () => {
		const model = `acc-${uid()}`;
		for (const body of [
			{ provider: "acme", model, input_per_million: -1 },
			{ provider: "acme", model, input_per_million: 0.0000000000001 },
			{ provider: "acme", model, input_per_million: 1e16 },
			{ provider: "ACME", model },
			{ provider: "acme", model: model.toUpperCase() },
			{ provider: "acme", model, origin: "catalog" },
			{ provider: "acme", model, currency: "usd" },
			{ provider: "acme", model, effective_from: "yesterday" },
			{ model },
		]) {
			const response = await post("/v1/model-prices", body);
			expectError(response, 400, "validation_error");
		}
		const list = await get(`/v1/model-prices?provider=acme&model=${model}`);
		expect(list.body.total).toBe(0);
	});

	it("creating and deleting is for read-write and admin keys (v1.3); reading for any API key, not SDK keys", async () => {
		const body = { provider: "acme", model: `acc-${uid()}` };
		for (const kind of ["read-only", "sdk"] as const) {
			expectError(await post("/v1/model-prices", body, { key: await createKey(kind) }), 403, "forbidden");
		}
		const readWrite = await createKey("read-write");
		const created = await post("/v1/model-prices", body, { key: readWrite });
		expect(created.status).toBe(201);
		for (const kind of ["read-only", "sdk"] as const) {
			expectError(
				await del(`/v1/model-prices/${created.body.id}`, { key: await createKey(kind) }),
				403,
				"forbidden",
			);
		}
		expect((await del(`/v1/model-prices/${created.body.id}`, { key: readWrite })).status).toBe(204);
		const readOnly = await get("/v1/model-prices?limit=1", { key: await createKey("read-only") });
		expect(readOnly.status).toBe(200);
		expect(Object.keys(readOnly.body).sort()).toEqual(["limit", "model_prices", "offset", "total"]);
		expectError(await get("/v1/model-prices", { key: await sdkKey() }), 403, "forbidden");
	});

	it("ships a catalog of at least 40 models of at least 6 providers, gpt-4o among them; deleting one is 409", async () => {
		const catalog: { id: string; provider: string; model: string }[] = [];
		for (let offset = 0; ; offset += 100) {
			const page = await get(`/v1/model-prices?origin=catalog&limit=100&offset=${offset}`);
			expect(page.status).toBe(200);
			catalog.push(...page.body.model_prices);
			if (page.body.model_prices.length < 100) break;
		}
		expect(new Set(catalog.map((p) => `${p.provider}/${p.model}`)).size).toBeGreaterThanOrEqual(40);
		expect(new Set(catalog.map((p) => p.provider)).size).toBeGreaterThanOrEqual(6);
		const gpt4o = catalog.find((p) => p.provider === "openai" && p.model === "gpt-4o");
		expect(gpt4o).toBeDefined();
		expectError(await del(`/v1/model-prices/${gpt4o?.id}`), 409, "conflict");
		expectError(await del("/v1/model-prices/mpr_unknown"), 404, "not_found");
	});

	it("refuses bad list queries with 400", async () => {
		for (const query of [
			"origin=other",
			"at=tomorrow",
			"limit=0",
			"limit=101",
			"offset=-1",
			"provider=a&provider=b",
		]) {
			expectError(await get(`/v1/model-prices?${query}`), 400, "validation_error");
		}
	});

	it("replays an Idempotency-Key; another body with it is 409 idempotency_key_reused", async () => {
		const body = { provider: "acme", model: `acc-${uid()}`, input_per_million: 1 };
		const headers = { "Idempotency-Key": `mp-${uid()}` };
		const first = await post("/v1/model-prices", body, { headers });
		const again = await post("/v1/model-prices", body, { headers });
		expect(again.status).toBe(201);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
		expectError(
			await post("/v1/model-prices", { ...body, input_per_million: 2 }, { headers }),
			409,
			"idempotency_key_reused",
		);
	});
});

describe("costing at ingest", () => {
	it("prices a call at its custom price, lists unpriced models, and re-rates when a price appears", async () => {
		const priced = `acc-${uid()}`;
		const unpriced = `acc-${uid()}`;
		const created = await post("/v1/model-prices", {
			provider: "acme",
			model: priced,
			input_per_million: 2,
			output_per_million: 8,
			per_request: 0.001,
			effective_from: new Date(Date.now() - DAY).toISOString(),
		});
		expect(created.status).toBe(201);
		const { subscription, instances } = await customer(callsPlan);
		const agentKey = instances[0] as string;
		const key = await sdkKey();
		for (const metadata of [
			{ model: priced, input_tokens: 1000, output_tokens: 500 },
			{ model: unpriced, input_tokens: 10, reasoning_tokens: 5 },
		]) {
			const r = await post(
				"/v1/actions",
				{ agent_key: agentKey, action_type: "llm_call", metadata },
				{ key },
			);
			expect(r.status).toBe(201);
		}
		await flush({ subscriptions: [subscription.id] });
		const costs = await get(`/v1/costs?model=${priced}`);
		expect(costs.status, JSON.stringify(costs.body)).toBe(200);
		// (1000 × 2 + 500 × 8) / 1e6 + 0.001 = 0.007
		expect(costs.body.costs).toEqual([
			expect.objectContaining({
				model: priced,
				source: "model_prices",
				cost_type: "llm_tokens",
				amount: 0.007,
			}),
		]);
		const period = currentPeriod();
		const before = await get(`/v1/costs/unpriced?billing_period=${period}`);
		expect(before.status).toBe(200);
		expect(before.body.billing_period).toBe(period);
		expect(before.body.models).toContainEqual({
			provider: null,
			model: unpriced,
			events: 1,
			input_tokens: 10,
			output_tokens: 0,
			cached_input_tokens: 0,
			reasoning_tokens: 5,
		});
		const later = await post("/v1/model-prices", {
			provider: "acme",
			model: unpriced,
			input_per_million: 1,
			effective_from: new Date(Date.now() - DAY).toISOString(),
		});
		expect(later.status).toBe(201);
		await flush({ subscriptions: [subscription.id] });
		let rerated: any;
		for (let i = 0; i < 50; i++) {
			rerated = await get(`/v1/costs?model=${unpriced}`);
			if (rerated.body.count > 0) break;
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
		// 10 × 1 + 5 × 0 (reasoning defaults to output = 0) → 0.00001
		expect(rerated.body.costs).toEqual([expect.objectContaining({ model: unpriced, amount: 0.00001 })]);
		const after = await get(`/v1/costs/unpriced?billing_period=${period}`);
		expect(after.body.models.map((m: { model: string }) => m.model)).not.toContain(unpriced);
	});

	it("refuses a malformed billing_period for unpriced models", async () => {
		for (const query of ["billing_period=2026-13", "billing_period=2026-1", "other=1"]) {
			expectError(await get(`/v1/costs/unpriced?${query}`), 400, "validation_error");
		}
		expectError(await get("/v1/costs/unpriced", { key: await sdkKey() }), 403, "forbidden");
	});
});

async function budget(subscriptionId: string, threshold: number) {
	const r = await post("/v1/alerts", { subscription_id: subscriptionId, threshold, block: true });
	expect(r.status, JSON.stringify(r.body)).toBe(201);
	return r.body as { id: string };
}

describe("budget reservations", () => {
	it("bounds ttl_seconds to 10–3600 and amount to > 0", async () => {
		const { instances } = await customer(callsPlan);
		const agentKey = instances[0] as string;
		for (const extra of [
			{ amount: 0 },
			{ amount: -1 },
			{ amount: 1, ttl_seconds: 9 },
			{ amount: 1, ttl_seconds: 3601 },
			{ amount: 1, ttl_seconds: 10.5 },
			{ amount: 1, status: "held" },
		]) {
			expectError(await post("/v1/reservations", { agent_key: agentKey, ...extra }), 400, "validation_error");
		}
		for (const ttl of [10, 3600]) {
			const r = await post("/v1/reservations", { agent_key: agentKey, amount: 1, ttl_seconds: ttl });
			expect(r.status, JSON.stringify(r.body)).toBe(201);
			expect(Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)).toBe(ttl * 1000);
			expect(r.body.status).toBe("held");
			expect(r.body.id).toMatch(/^rsv_/);
		}
	});

	it("lets SDK and read-write keys reserve, release and read; read-only keys only read", async () => {
		const { instances } = await customer(callsPlan);
		const agentKey = instances[0] as string;
		const readOnly = await createKey("read-only");
		expectError(
			await post("/v1/reservations", { agent_key: agentKey, amount: 1 }, { key: readOnly }),
			403,
			"forbidden",
		);
		for (const key of [await sdkKey(), await createKey("read-write")]) {
			const r = await post("/v1/reservations", { agent_key: agentKey, amount: 1 }, { key });
			expect(r.status, JSON.stringify(r.body)).toBe(201);
			expect((await get(`/v1/reservations/${r.body.id}`, { key })).status).toBe(200);
			expect((await get(`/v1/reservations/${r.body.id}`, { key: readOnly })).body.status).toBe("held");
			expectError(
				await post(`/v1/reservations/${r.body.id}/release`, undefined, { key: readOnly }),
				403,
				"forbidden",
			);
			const released = await post(`/v1/reservations/${r.body.id}/release`, undefined, { key });
			expect(released.status, JSON.stringify(released.body)).toBe(200);
			expect(released.body.status).toBe("released");
			expectError(await post(`/v1/reservations/${r.body.id}/release`, undefined, { key }), 409, "conflict");
		}
		expectError(await post("/v1/reservations/rsv_unknown/release"), 404, "not_found");
		expectError(await get("/v1/reservations/rsv_unknown"), 404, "not_found");
	});

	it("refuses what does not fit with budget_exceeded details; entitlements show the budget", async () => {
		const { subscription, instances } = await customer(callsPlan);
		const agentKey = instances[0] as string;
		const none = await get(`/v1/entitlements?agent_key=${agentKey}`, { key: await sdkKey() });
		expect(none.body).toEqual({
			agent_key: agentKey,
			subscription_id: subscription.id,
			allowed: true,
			blocked_by: [],
			budget: null,
		});
		const alert = await budget(subscription.id, 12);
		const hold = await post("/v1/reservations", { agent_key: agentKey, amount: 1.5 });
		expect(hold.status).toBe(201);
		const refused = await post("/v1/reservations", { agent_key: agentKey, amount: 0.75 });
		const error = expectError(refused, 409, "budget_exceeded");
		expect(error.details).toEqual([
			{ alert_id: alert.id, threshold: 12, spent: 10, held: 1.5, requested: 0.75 },
		]);
		const ent = await get(`/v1/entitlements?agent_key=${agentKey}`, { key: await createKey("read-only") });
		expect(ent.body.budget).toEqual({
			alert_id: alert.id,
			threshold: 12,
			spent: 10,
			held: 1.5,
			available: 0.5,
		});
		expect(ent.body.allowed).toBe(true);
		const fits = await post("/v1/reservations", { agent_key: agentKey, amount: 0.5 });
		expect(fits.status).toBe(201);
		const full = await get(`/v1/entitlements?agent_key=${agentKey}`, { key: await sdkKey() });
		expect(full.body.budget.available).toBe(0);
		expect(full.body.allowed).toBe(false);
	});

	it("404 for an unknown instance, 409 conflict without an active subscription", async () => {
		expectError(await post("/v1/reservations", { agent_key: instanceKey(), amount: 1 }), 404, "not_found");
		const agentKey = instanceKey();
		const sent = await post(
			"/v1/actions",
			{ agent_key: agentKey, action_type: "x" },
			{ key: await sdkKey() },
		);
		expect(sent.status).toBe(201);
		expectError(await post("/v1/reservations", { agent_key: agentKey, amount: 1 }), 409, "conflict");
	});

	it("settles by an event naming it; an event naming an ended hold is counted as usual", async () => {
		const { subscription, instances } = await customer(callsPlan);
		const agentKey = instances[0] as string;
		const hold = await post("/v1/reservations", { agent_key: agentKey, amount: 1 });
		const key = await sdkKey();
		for (let i = 0; i < 2; i++) {
			const r = await post(
				"/v1/actions",
				{ agent_key: agentKey, action_type: "llm_call", metadata: { reservation_id: hold.body.id } },
				{ key },
			);
			expect(r.status).toBe(201);
		}
		await flush({ subscriptions: [subscription.id] });
		expect((await get(`/v1/reservations/${hold.body.id}`)).body.status).toBe("settled");
		const usage = await get(`/v1/usage?subscription_id=${subscription.id}`);
		expect(usage.body.usage).toContainEqual(expect.objectContaining({ type: "llm_call", count: 2 }));
	});

	it("replays an Idempotency-Key on reserve and release", async () => {
		const { instances } = await customer(callsPlan);
		const agentKey = instances[0] as string;
		const headers = { "Idempotency-Key": `r-${uid()}` };
		const a = await post("/v1/reservations", { agent_key: agentKey, amount: 1 }, { headers });
		const b = await post("/v1/reservations", { agent_key: agentKey, amount: 1 }, { headers });
		expect(b.status).toBe(201);
		expect(b.body).toEqual(a.body);
		expect(b.headers.get("Idempotent-Replayed")).toBe("true");
		expectError(
			await post("/v1/reservations", { agent_key: agentKey, amount: 2 }, { headers }),
			409,
			"idempotency_key_reused",
		);
		const relHeaders = { "Idempotency-Key": `rel-${uid()}` };
		const r1 = await post(`/v1/reservations/${a.body.id}/release`, undefined, { headers: relHeaders });
		const r2 = await post(`/v1/reservations/${a.body.id}/release`, undefined, { headers: relHeaders });
		expect(r1.status).toBe(200);
		expect(r2.status).toBe(200);
		expect(r2.headers.get("Idempotent-Replayed")).toBe("true");
	});
});

describe("the JSON conventions on the new POSTs", () => {
	it("415 without a JSON type, 400 invalid_json, 413 past 1 MiB", async () => {
		for (const path of ["/v1/model-prices", "/v1/reservations", "/v1/alerts"]) {
			const text = await call("POST", path, { raw: "{}", headers: { "Content-Type": "text/plain" } });
			expectError(text, 415, "unsupported_media_type");
			const bad = await call("POST", path, { raw: "{bad", headers: { "Content-Type": "application/json" } });
			expectError(bad, 400, "invalid_json");
			const big = await call("POST", path, {
				raw: JSON.stringify({ x: "a".repeat(1_100_000) }),
				headers: { "Content-Type": "application/json" },
			});
			expectError(big, 413, "payload_too_large");
		}
	});

	it("fits holds by exact decimal sums: 10 + 0.1 + 0.2 is exactly a budget of 10.3", async () => {
		const { subscription, instances } = await customer(callsPlan);
		await budget(subscription.id, 10.3);
		for (const amount of [0.1, 0.2]) {
			const r = await post("/v1/reservations", { agent_key: instances[0], amount });
			expect(r.status, JSON.stringify(r.body)).toBe(201);
		}
		const ent = await get(`/v1/entitlements?agent_key=${instances[0]}`, { key: await sdkKey() });
		expect(ent.body.budget).toMatchObject({ spent: 10, held: 0.3, available: 0 });
		expect(ent.body.allowed).toBe(false);
	});
});

describe("live margins", () => {
	it("answers the documented shape: breakdown [] without group_by, status open now, closed before", async () => {
		const period = currentPeriod();
		const readOnly = await createKey("read-only");
		const open = await get(`/v1/reports/margins?billing_period=${period}`, { key: readOnly });
		expect(open.status, JSON.stringify(open.body)).toBe(200);
		expect(Object.keys(open.body).sort()).toEqual(
			[
				"billing_period",
				"status",
				"currency",
				"revenue",
				"costs",
				"margin",
				"margin_percent",
				"breakdown",
			].sort(),
		);
		expect(open.body).toMatchObject({
			billing_period: period,
			status: "open",
			currency: "USD",
			breakdown: [],
		});
		const closed = await get(`/v1/reports/margins?billing_period=${shiftPeriod(period, -2)}`);
		expect(closed.body.status).toBe("closed");
		expect(closed.body.breakdown).toEqual([]);
	});

	it("refuses a missing or malformed billing_period and an unknown group_by; not for SDK keys", async () => {
		const period = currentPeriod();
		for (const query of [
			"",
			"billing_period=2026-13",
			"billing_period=2026-1",
			"billing_period=2026-11-01",
			`billing_period=${period}&group_by=plan`,
			`billing_period=${period}&currency=usd`,
			`billing_period=${period}&billing_period=${period}`,
		]) {
			expectError(await get(`/v1/reports/margins?${query}`), 400, "validation_error");
		}
		expectError(
			await get(`/v1/reports/margins?billing_period=${period}`, { key: await sdkKey() }),
			403,
			"forbidden",
		);
	});

	it("group_by=model: revenue to a model only through a charge filtered to exactly one model; rows sum", async () => {
		const model = `acc-${uid()}`;
		const other = `acc-${uid()}`;
		await post("/v1/model-prices", {
			provider: "acme",
			model,
			input_per_million: 1000,
			effective_from: new Date(Date.now() - DAY).toISOString(),
		});
		const plan = {
			base_fee: 5,
			charges: [
				{
					metric: "one",
					source: { kind: "action", type: "llm_call", aggregate: "count", filter: { model } },
					model: "per_unit",
					unit_price: 1,
				},
				{
					metric: "two",
					source: { kind: "action", type: "llm_call", aggregate: "count", filter: { model: [model, other] } },
					model: "per_unit",
					unit_price: 0.5,
				},
			],
		};
		const { subscription, instances } = await customer(plan);
		const key = await sdkKey();
		for (let i = 0; i < 3; i++) {
			await post(
				"/v1/actions",
				{ agent_key: instances[0], action_type: "llm_call", metadata: { model, input_tokens: 1000 } },
				{ key },
			);
		}
		await flush({ subscriptions: [subscription.id] });
		const report = await get(`/v1/reports/margins?billing_period=${currentPeriod()}&group_by=model`);
		expect(report.status, JSON.stringify(report.body)).toBe(200);
		const rows = report.body.breakdown as {
			id: string | null;
			name: string;
			revenue: number;
			costs: number;
		}[];
		const row = rows.find((r) => r.id === model);
		expect(row).toMatchObject({ revenue: 3, costs: 3 });
		expect(exactSum(rows.map((r) => r.revenue))).toBe(exactSum([report.body.revenue]));
		expect(exactSum(rows.map((r) => r.costs))).toBe(exactSum([report.body.costs]));
		expect(rows.find((r) => r.id === null)?.name).toBe("unattributed");
	});
});

describe("margin alerts", () => {
	it("bounds the threshold to -10000..100 and refuses metric and block", async () => {
		const { subscription } = await customer(callsPlan);
		const base = { subscription_id: subscription.id, type: "margin" };
		for (const extra of [
			{ threshold: -10000.01 },
			{ threshold: 100.01 },
			{ threshold: 10, metric: "calls" },
			{ threshold: 10, block: true },
			{ threshold: 10, block: false },
			{ threshold: 10, min_costs: -1 },
			{},
		]) {
			expectError(await post("/v1/alerts", { ...base, ...extra }), 400, "validation_error");
		}
		for (const threshold of [-10000, 100, 0]) {
			const r = await post("/v1/alerts", { ...base, threshold });
			expect(r.status, JSON.stringify(r.body)).toBe(201);
			expect(r.body).toMatchObject({ type: "margin", threshold, min_costs: 0 });
		}
		const usage = await post("/v1/alerts", { subscription_id: subscription.id, threshold: 5 });
		expect(usage.body.type).toBe("usage");
		expectError(
			await post("/v1/alerts", { subscription_id: subscription.id, threshold: 0 }),
			400,
			"validation_error",
		);
	});
});

const ACCEPT = "application/json, text/event-stream";
const rpc = (key: string | null, message: unknown) =>
	call("POST", "/mcp", {
		key,
		body: message,
		headers: { Accept: ACCEPT, "MCP-Protocol-Version": "2025-06-18" },
	});

describe("MCP", () => {
	it("401 without a key; 202 for the initialized notification", async () => {
		expectError(await rpc(null, { jsonrpc: "2.0", id: 1, method: "tools/list" }), 401, "unauthorized");
		const n = await rpc(ADMIN_KEY, { jsonrpc: "2.0", method: "notifications/initialized" });
		expect(n.status).toBe(202);
	});

	it("a tool error is an isError result carrying the REST error body", async () => {
		const r = await rpc(ADMIN_KEY, {
			jsonrpc: "2.0",
			id: 7,
			method: "tools/call",
			params: { name: "release_reservation", arguments: { reservation_id: "rsv_unknown" } },
		});
		expect(r.status).toBe(200);
		expect(r.body.id).toBe(7);
		expect(r.body.result.isError).toBe(true);
		const body = JSON.parse(r.body.result.content[0].text);
		expect(body.error.code).toBe("not_found");
		expect(typeof body.error.request_id).toBe("string");
		if (r.body.result.structuredContent !== undefined) expect(r.body.result.structuredContent).toEqual(body);
	});

	it("get_margins answers what REST answers", async () => {
		const period = currentPeriod();
		const r = await rpc(ADMIN_KEY, {
			jsonrpc: "2.0",
			id: 8,
			method: "tools/call",
			params: { name: "get_margins", arguments: { billing_period: period } },
		});
		expect(r.body.result.isError ?? false).toBe(false);
		const json = JSON.parse(r.body.result.content[0].text);
		expect(r.body.result.structuredContent).toEqual(json);
		const rest = await get(`/v1/reports/margins?billing_period=${period}`);
		expect(json).toEqual(rest.body);
	});

	it("an SDK key reserving through reserve_budget; a read-only key is refused with the 403 body", async () => {
		const { instances } = await customer(callsPlan);
		const args = { agent_key: instances[0], amount: 0.5 };
		const ok = await rpc(await sdkKey(), {
			jsonrpc: "2.0",
			id: 9,
			method: "tools/call",
			params: { name: "reserve_budget", arguments: args },
		});
		expect(ok.body.result.structuredContent).toMatchObject({ status: "held", amount: 0.5 });
		const no = await rpc(await createKey("read-only"), {
			jsonrpc: "2.0",
			id: 10,
			method: "tools/call",
			params: { name: "reserve_budget", arguments: args },
		});
		expect(no.body.result.isError).toBe(true);
		expect(JSON.parse(no.body.result.content[0].text).error.code).toBe("forbidden");
	});

	it("answers an unknown tool and malformed JSON-RPC with JSON-RPC errors", async () => {
		const unknown = await rpc(ADMIN_KEY, {
			jsonrpc: "2.0",
			id: 11,
			method: "tools/call",
			params: { name: "drop_tables", arguments: {} },
		});
		expect(unknown.body.error.code).toBe(-32602);
		for (const params of [{ arguments: {} }, { name: "get_usage", arguments: "x" }, { name: 5 }]) {
			const invalid = await rpc(ADMIN_KEY, { jsonrpc: "2.0", id: 13, method: "tools/call", params });
			expect(invalid.status).toBe(200);
			expect(invalid.body.id).toBe(13);
			// Invalid params (-32602), in words: not an internal error (-32603) quoting the validator's JSON.
			expect(invalid.body.error.code, JSON.stringify(invalid.body)).toBe(-32602);
			expect(invalid.body.error.message).toMatch(/^Invalid params: params\.(name|arguments) /);
		}
		const noParams = await rpc(ADMIN_KEY, { jsonrpc: "2.0", id: 14, method: "initialize" });
		expect(noParams.body.error.code, JSON.stringify(noParams.body)).toBe(-32602);
		const noVersion = await rpc(ADMIN_KEY, { id: 12, method: "tools/list" });
		expect(noVersion.status).toBe(400);
		expect(noVersion.body.error.code).toBe(-32600);
	});
});
