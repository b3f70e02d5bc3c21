import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { catalogPrices } from "../../src/model-costs/prices";
import { createKey, del, expectError, get, post } from "../helpers";

const DAY = 24 * 60 * 60 * 1000;
const isoIn = (ms: number) => new Date(Date.now() + ms).toISOString();
const gpt4o = () => catalogPrices().find((p) => p.provider === "openai" && p.model === "gpt-4o");

async function storedCustomPrices(): Promise<number> {
	const row = await env.DB.prepare("SELECT count(*) AS n FROM model_prices").first<{ n: number }>();
	return row?.n ?? 0;
}

describe("POST /v1/model-prices", () => {
	it("creates a custom price with the defaults filled in (201, origin custom)", async () => {
		const before = Date.now();
		const response = await post("/v1/model-prices", {
			provider: "acme-ai",
			model: "acme-1",
			input_per_million: 1.5,
			output_per_million: 6,
		});
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body).toMatchObject({
			provider: "acme-ai",
			model: "acme-1",
			currency: "USD",
			input_per_million: 1.5,
			output_per_million: 6,
			cached_input_per_million: 1.5,
			reasoning_per_million: 6,
			per_request: 0,
			origin: "custom",
		});
		expect(response.body.id).toMatch(/^mpr_[0-9a-z]{26}$/);
		expect(Date.parse(response.body.effective_from)).toBeGreaterThanOrEqual(before - 1000);
		expect(response.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
		const listed = await get(`/v1/model-prices?model=acme-1`);
		expect(listed.body.model_prices.map((p: { id: string }) => p.id)).toEqual([response.body.id]);
	});

	it("takes every rate, a currency, and an effective_from in the future or up to 35 days back", async () => {
		const future = await post("/v1/model-prices", {
			provider: "openai",
			model: "gpt-4o",
			currency: "EUR",
			input_per_million: 0.000000000001,
			output_per_million: 1e15,
			cached_input_per_million: 0.5,
			reasoning_per_million: 12.25,
			per_request: 0.001,
			effective_from: "2099-01-01T01:00:00+01:00",
		});
		expect(future.status, JSON.stringify(future.body)).toBe(201);
		expect(future.body).toMatchObject({
			currency: "EUR",
			input_per_million: 1e-12,
			output_per_million: 1e15,
			cached_input_per_million: 0.5,
			reasoning_per_million: 12.25,
			per_request: 0.001,
			effective_from: "2099-01-01T00:00:00.000Z",
		});
		const past = await post("/v1/model-prices", {
			provider: "openai",
			model: "gpt-4o-mini",
			effective_from: isoIn(-34 * DAY),
		});
		expect(past.status, JSON.stringify(past.body)).toBe(201);
		expect(past.body).toMatchObject({ input_per_million: 0, output_per_million: 0, per_request: 0 });
	});

	it.each([
		["an effective_from over 35 days back", { effective_from: isoIn(-36 * DAY) }, "effective_from"],
		["an effective_from without offset", { effective_from: "2026-12-01T00:00:00" }, "effective_from"],
		["a negative price", { input_per_million: -1 }, "input_per_million"],
		["a price over 1e15", { output_per_million: 1e16 }, "output_per_million"],
		["a price with 13 decimals", { per_request: 0.0000000000001 }, "per_request"],
		["a price as a string", { input_per_million: "2.5" }, "input_per_million"],
		["an upper-case model", { model: "GPT-4o" }, "model"],
		["a model that is not a string", { model: 4 }, "model"],
		["an upper-case provider", { provider: "OpenAI" }, "provider"],
		["a lower-case currency", { currency: "usd" }, "currency"],
		["an unknown field", { origin: "catalog" }, "origin"],
		["a set id", { id: "mpr_01jd0000000000000000000000" }, "id"],
	])("refuses %s (400) and stores nothing", async (_, change, path) => {
		const before = await storedCustomPrices();
		const response = await post("/v1/model-prices", {
			provider: "openai",
			model: "gpt-4o",
			input_per_million: 2,
			...change,
		});
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.map((d) => d.path).join(" ")).toContain(path);
		expect(await storedCustomPrices()).toBe(before);
	});

	it("requires provider and model", async () => {
		const error = expectError(
			await post("/v1/model-prices", { input_per_million: 1 }),
			400,
			"validation_error",
		);
		const paths = error.details?.map((d) => d.path);
		expect(paths).toContain("provider");
		expect(paths).toContain("model");
	});

	it("is for read-write and admin keys", async () => {
		for (const kind of ["read-only", "sdk"] as const) {
			const key = await createKey(kind);
			expectError(await post("/v1/model-prices", { provider: "x", model: "y" }, { key }), 403, "forbidden");
		}
		const body = { provider: "acme-ai", model: "acme-read-write", input_per_million: 1 };
		const made = await post("/v1/model-prices", body, { key: await createKey("read-write") });
		expect(made.status, JSON.stringify(made.body)).toBe(201);
		expect(made.body).toMatchObject({ ...body, origin: "custom" });
	});

	it("replays an Idempotency-Key instead of adding a second price", async () => {
		const body = { provider: "acme-ai", model: "acme-idem", input_per_million: 1 };
		const headers = { "Idempotency-Key": "price-once" };
		const first = await post("/v1/model-prices", body, { headers });
		const second = await post("/v1/model-prices", body, { headers });
		expect(first.status).toBe(201);
		expect(second.status).toBe(201);
		expect(second.headers.get("Idempotent-Replayed")).toBe("true");
		expect(second.body).toEqual(first.body);
		expect((await get("/v1/model-prices?model=acme-idem")).body.total).toBe(1);
		expectError(
			await post("/v1/model-prices", { ...body, input_per_million: 2 }, { headers }),
			409,
			"idempotency_key_reused",
		);
	});
});

describe("DELETE /v1/model-prices/{id}", () => {
	it("deletes a custom price (204), after which it is gone (404)", async () => {
		const created = await post("/v1/model-prices", {
			provider: "acme-ai",
			model: "acme-del",
			input_per_million: 1,
		});
		const response = await del(`/v1/model-prices/${created.body.id}`);
		expect(response.status).toBe(204);
		expect(response.body).toBeNull();
		expect((await get("/v1/model-prices?model=acme-del")).body.total).toBe(0);
		expectError(await del(`/v1/model-prices/${created.body.id}`), 404, "not_found");
	});

	it("refuses to delete a catalog price (409) and keeps it", async () => {
		const id = gpt4o()?.id as string;
		expectError(await del(`/v1/model-prices/${id}`), 409, "conflict");
		const listed = await get("/v1/model-prices?provider=openai&model=gpt-4o&origin=catalog");
		expect(listed.body.model_prices.map((p: { id: string }) => p.id)).toEqual([id]);
	});

	it("answers 404 for an unknown id and for a price of the other environment", async () => {
		expectError(await del("/v1/model-prices/mpr_01jd0000000000000000000000"), 404, "not_found");
		const testAdmin = await createKey("admin", "test");
		const created = await post(
			"/v1/model-prices",
			{ provider: "acme-ai", model: "acme-test-env", input_per_million: 1 },
			{ key: testAdmin },
		);
		expect(created.status).toBe(201);
		expectError(await del(`/v1/model-prices/${created.body.id}`), 404, "not_found");
		expect((await get("/v1/model-prices?model=acme-test-env", { key: testAdmin })).body.total).toBe(1);
		expect((await get("/v1/model-prices?model=acme-test-env")).body.total).toBe(0);
	});

	it("is for read-write and admin keys", async () => {
		const readOnly = await createKey("read-only");
		expectError(await del(`/v1/model-prices/${gpt4o()?.id}`, { key: readOnly }), 403, "forbidden");
		const key = await createKey("read-write");
		const made = await post("/v1/model-prices", { provider: "acme-ai", model: "acme-rw-del" }, { key });
		expect(made.status, JSON.stringify(made.body)).toBe(201);
		expect((await del(`/v1/model-prices/${made.body.id}`, { key })).status).toBe(204);
	});
});

describe("GET /v1/model-prices", () => {
	it("lists the catalog in both environments, with the same ids, to read-only keys", async () => {
		const live = await get("/v1/model-prices?origin=catalog&limit=100", {
			key: await createKey("read-only"),
		});
		const test = await get("/v1/model-prices?origin=catalog&limit=100", {
			key: await createKey("read-only", "test"),
		});
		expect(live.status).toBe(200);
		expect(live.body.total).toBe(catalogPrices().length);
		expect(live.body.total).toBeGreaterThanOrEqual(40);
		expect(live.body.limit).toBe(100);
		expect(live.body.offset).toBe(0);
		expect(test.body.model_prices).toEqual(live.body.model_prices);
		expect(live.body.model_prices.find((p: { model: string }) => p.model === "gpt-4o")).toMatchObject({
			provider: "openai",
			input_per_million: 2.5,
			cached_input_per_million: 1.25,
			output_per_million: 10,
			origin: "catalog",
		});
	});

	it("pages newest first, custom prices before the catalog", async () => {
		const a = await post("/v1/model-prices", {
			provider: "acme-ai",
			model: "acme-page",
			input_per_million: 1,
		});
		const b = await post("/v1/model-prices", {
			provider: "acme-ai",
			model: "acme-page",
			input_per_million: 2,
		});
		const first = await get("/v1/model-prices?limit=1");
		expect(first.body.model_prices).toHaveLength(1);
		const all = await get("/v1/model-prices?limit=100");
		const ids = all.body.model_prices.map((p: { id: string }) => p.id);
		expect(ids.indexOf(b.body.id)).toBeLessThan(ids.indexOf(a.body.id));
		const firstCatalog = all.body.model_prices.findIndex((p: { origin: string }) => p.origin === "catalog");
		expect(
			all.body.model_prices.slice(firstCatalog).every((p: { origin: string }) => p.origin === "catalog"),
		).toBe(true);
		const second = await get(`/v1/model-prices?limit=1&offset=1`);
		expect(second.body.model_prices[0].id).toBe(ids[1]);
		expect(second.body.total).toBe(all.body.total);
	});

	it("with at, gives per (provider, model) only the price in effect: the latest custom one, else the catalog's", async () => {
		const now = Date.now();
		const older = await post("/v1/model-prices", {
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			input_per_million: 2,
			output_per_million: 10,
			effective_from: new Date(now - 10 * DAY).toISOString(),
		});
		const newer = await post("/v1/model-prices", {
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			input_per_million: 1,
			output_per_million: 5,
			effective_from: new Date(now - 2 * DAY).toISOString(),
		});
		const later = await post("/v1/model-prices", {
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			input_per_million: 0.5,
			effective_from: new Date(now + 30 * DAY).toISOString(),
		});
		const at = (ms: number) =>
			get(`/v1/model-prices?provider=anthropic&model=claude-sonnet-4-5&at=${new Date(ms).toISOString()}`);
		const catalogId = catalogPrices().find((p) => p.model === "claude-sonnet-4-5")?.id;
		expect((await at(now - 20 * DAY)).body.model_prices.map((p: { id: string }) => p.id)).toEqual([
			catalogId,
		]);
		expect((await at(now - 5 * DAY)).body.model_prices.map((p: { id: string }) => p.id)).toEqual([
			older.body.id,
		]);
		const current = await at(now);
		expect(current.body.total).toBe(1);
		expect(current.body.model_prices[0]).toMatchObject({ id: newer.body.id, input_per_million: 1 });
		expect((await at(now + 31 * DAY)).body.model_prices[0].id).toBe(later.body.id);
		// Without filters, one price per (provider, model).
		const everything = await get(`/v1/model-prices?limit=100&at=${new Date(now).toISOString()}`);
		const keys = everything.body.model_prices.map(
			(p: { provider: string; model: string }) => `${p.provider}/${p.model}`,
		);
		expect(new Set(keys).size).toBe(keys.length);
		expect(keys).toContain("anthropic/claude-sonnet-4-5");
	});

	it.each([
		["at=yesterday", "at"],
		["at=2026-11-25T00:00:00", "at"],
		["origin=mine", "origin"],
		["limit=0", "limit"],
		["limit=101", "limit"],
		["offset=-1", "offset"],
		["model=a&model=b", "model"],
		["colour=red", "colour"],
	])("refuses ?%s (400)", async (query, path) => {
		const error = expectError(await get(`/v1/model-prices?${query}`), 400, "validation_error");
		expect(error.details?.map((d) => d.path).join(" ")).toContain(path);
	});

	it("is not for SDK keys", async () => {
		expectError(await get("/v1/model-prices", { key: await createKey("sdk") }), 403, "forbidden");
	});
});
