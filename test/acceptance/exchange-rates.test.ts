/**
 * Black-box checks of exchange rates (CONTRACT §35, with §1–§4 and §14), written from the contract's text as an
 * outside client calls them: create, the rate in effect at an instant, the list, bad input, keys, environments.
 * Each test uses its own currency pairs, since rates are shared by the whole environment.
 */
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, post } from "../helpers";
import { dbFingerprint } from "../support/db-state";
import { hoursFromNow } from "./billing-fixtures";

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function rate(fields: Record<string, unknown>, key?: string) {
	const response = await post("/v1/exchange-rates", fields, key === undefined ? {} : { key });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; base: string; quote: string; rate: number; effective_at: string };
}

describe("POST /v1/exchange-rates", () => {
	it("answers 201 with the rate as created, effective now by default", async () => {
		const before = Date.now();
		const created = await post("/v1/exchange-rates", { base: "USD", quote: "EUR", rate: 0.917354123456 });
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		expect(Object.keys(created.body).sort()).toEqual(
			["base", "created_at", "effective_at", "id", "quote", "rate"].sort(),
		);
		expect(created.body).toMatchObject({ base: "USD", quote: "EUR", rate: 0.917354123456 });
		expect(typeof created.body.id).toBe("string");
		expect(created.body.effective_at).toMatch(ISO_MS);
		expect(created.body.created_at).toMatch(ISO_MS);
		const effective = Date.parse(created.body.effective_at);
		expect(effective).toBeGreaterThanOrEqual(before - 1000);
		expect(effective).toBeLessThanOrEqual(Date.now() + 1000);
	});

	it("takes effective_at in the past or the future, with any offset, and answers it in UTC", async () => {
		const past = await rate({
			base: "GBP",
			quote: "SEK",
			rate: 13.5,
			effective_at: "2026-01-01T01:00:00+01:00",
		});
		expect(past.effective_at).toBe("2026-01-01T00:00:00.000Z");
		const future = await rate({ base: "GBP", quote: "SEK", rate: 14, effective_at: "2030-06-01T00:00:00Z" });
		expect(future.effective_at).toBe("2030-06-01T00:00:00.000Z");
	});

	it("takes a rate with 12 decimals and large rates, exactly", async () => {
		expect((await rate({ base: "KWD", quote: "IDR", rate: 1234.123456789012 })).rate).toBe(1234.123456789012);
		expect((await rate({ base: "KWD", quote: "VND", rate: 0.000000000001 })).rate).toBe(0.000000000001);
	});

	it.each([
		["rate 0", { base: "USD", quote: "NOK", rate: 0 }],
		["a negative rate", { base: "USD", quote: "NOK", rate: -1.2 }],
		["13 decimals", { base: "USD", quote: "NOK", rate: 1.0000000000001 }],
		["a rate as a string", { base: "USD", quote: "NOK", rate: "10.5" }],
		["no rate", { base: "USD", quote: "NOK" }],
		["no base", { quote: "NOK", rate: 10 }],
		["no quote", { base: "USD", rate: 10 }],
		["base equal to quote", { base: "NOK", quote: "NOK", rate: 1 }],
		["a lower-case code", { base: "usd", quote: "NOK", rate: 10 }],
		["a code that is not ISO 4217", { base: "USD", quote: "ABC", rate: 10 }],
		["a two-letter code", { base: "US", quote: "NOK", rate: 10 }],
		["a rate over 1e15", { base: "USD", quote: "NOK", rate: 2e15 }],
		["a bad effective_at", { base: "USD", quote: "NOK", rate: 10, effective_at: "yesterday" }],
		["an unknown field", { base: "USD", quote: "NOK", rate: 10, id: "fx_mine" }],
	])("refuses %s with 400 validation_error, storing nothing", async (_label, body) => {
		const before = await dbFingerprint(["api_keys", "idempotency_keys"]);
		const error = expectError(await post("/v1/exchange-rates", body), 400, "validation_error");
		expect(error.message.length).toBeGreaterThan(0);
		expect(await dbFingerprint(["api_keys", "idempotency_keys"])).toEqual(before);
	});

	it("refuses malformed JSON (400) and a body that is not JSON (415)", async () => {
		expectError(
			await post("/v1/exchange-rates", undefined, {
				raw: "{",
				headers: { "Content-Type": "application/json" },
			}),
			400,
			"invalid_json",
		);
		expectError(
			await post("/v1/exchange-rates", undefined, {
				raw: '{"base":"USD","quote":"NOK","rate":1}',
				headers: { "Content-Type": "text/plain" },
			}),
			415,
			"unsupported_media_type",
		);
	});

	it("replays an Idempotency-Key with the first answer and refuses it with another body", async () => {
		const headers = { "Idempotency-Key": `fx-${crypto.randomUUID()}` };
		const body = { base: "CHF", quote: "PLN", rate: 4.5 };
		const first = await post("/v1/exchange-rates", body, { headers });
		expect(first.status).toBe(201);
		const again = await post("/v1/exchange-rates", { rate: 4.5, quote: "PLN", base: "CHF" }, { headers });
		expect(again.status).toBe(201);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
		expectError(
			await post("/v1/exchange-rates", { ...body, rate: 4.6 }, { headers }),
			409,
			"idempotency_key_reused",
		);
		const list = await get("/v1/exchange-rates?limit=100");
		expect(
			list.body.exchange_rates.filter(
				(r: { base: string; quote: string }) => r.base === "CHF" && r.quote === "PLN",
			),
		).toHaveLength(1);
	});
});

describe("GET /v1/exchange-rates?base=&quote=&at=", () => {
	it("answers the rate with the latest effective_at at or before the instant, default now", async () => {
		const old = await rate({
			base: "EUR",
			quote: "CZK",
			rate: 24.5,
			effective_at: "2025-01-01T00:00:00.000Z",
		});
		const current = await rate({ base: "EUR", quote: "CZK", rate: 25.25, effective_at: hoursFromNow(-1) });
		const future = await rate({ base: "EUR", quote: "CZK", rate: 26, effective_at: hoursFromNow(48) });

		const now = await get("/v1/exchange-rates?base=EUR&quote=CZK");
		expect(now.status, JSON.stringify(now.body)).toBe(200);
		expect(now.body).toEqual(current);
		const then = await get("/v1/exchange-rates?base=EUR&quote=CZK&at=2025-06-01T00:00:00Z");
		expect(then.body).toEqual(old);
		// both ends: exactly at effective_at is in effect
		expect((await get(`/v1/exchange-rates?base=EUR&quote=CZK&at=${old.effective_at}`)).body).toEqual(old);
		expect((await get(`/v1/exchange-rates?base=EUR&quote=CZK&at=${hoursFromNow(72)}`)).body).toEqual(future);
		// an offset instant is the same instant
		expect(
			(
				await get(
					`/v1/exchange-rates?base=EUR&quote=CZK&at=${encodeURIComponent("2025-06-01T02:00:00+02:00")}`,
				)
			).body,
		).toEqual(old);
	});

	it("answers 404 when no rate is in effect at the instant, and for a pair never created", async () => {
		await rate({ base: "EUR", quote: "HUF", rate: 400, effective_at: "2026-03-01T00:00:00Z" });
		expectError(
			await get("/v1/exchange-rates?base=EUR&quote=HUF&at=2026-02-28T23:59:59.999Z"),
			404,
			"not_found",
		);
		expectError(await get("/v1/exchange-rates?base=HUF&quote=ISK"), 404, "not_found");
		const onlyFuture = await rate({ base: "EUR", quote: "RON", rate: 5, effective_at: hoursFromNow(24) });
		expect(onlyFuture.rate).toBe(5);
		expectError(await get("/v1/exchange-rates?base=EUR&quote=RON"), 404, "not_found");
	});

	it("does not answer a reverse pair for the pair asked", async () => {
		await rate({ base: "AUD", quote: "NZD", rate: 1.09, effective_at: "2026-01-01T00:00:00Z" });
		expectError(await get("/v1/exchange-rates?base=NZD&quote=AUD"), 404, "not_found");
	});

	it.each([
		"base=USD&quote=USD",
		"base=usd&quote=EUR",
		"base=USD&quote=ABC",
		"base=USD&quote=EUR&at=tomorrow",
		"base=USD&base=GBP&quote=EUR",
	])("refuses %s with 400", async (query) => {
		expectError(await get(`/v1/exchange-rates?${query}`), 400, "validation_error");
	});
});

describe("GET /v1/exchange-rates (the list)", () => {
	it("lists every rate, newest effective_at first, with total, limit and offset", async () => {
		const a = await rate({ base: "SGD", quote: "MYR", rate: 3.4, effective_at: "2001-01-01T00:00:00Z" });
		const b = await rate({ base: "SGD", quote: "MYR", rate: 3.5, effective_at: "2001-01-03T00:00:00Z" });
		const c = await rate({ base: "SGD", quote: "THB", rate: 26, effective_at: "2001-01-02T00:00:00Z" });
		const list = await get("/v1/exchange-rates?limit=100");
		expect(list.status).toBe(200);
		expect(list.body).toMatchObject({ limit: 100, offset: 0 });
		expect(list.body.total).toBe(list.body.exchange_rates.length);
		const effective = list.body.exchange_rates.map((r: { effective_at: string }) => r.effective_at);
		expect([...effective].sort().reverse()).toEqual(effective);
		const mine = list.body.exchange_rates.filter((r: { id: string }) => [a.id, b.id, c.id].includes(r.id));
		expect(mine).toEqual([b, c, a]);

		const page = await get("/v1/exchange-rates?limit=1&offset=1");
		expect(page.body).toMatchObject({ limit: 1, offset: 1, total: list.body.total });
		expect(page.body.exchange_rates).toEqual([list.body.exchange_rates[1]]);
		const defaults = await get("/v1/exchange-rates");
		expect(defaults.body).toMatchObject({ limit: 20, offset: 0 });
	});

	it.each(["limit=0", "limit=101", "limit=1e2", "offset=-1", "limit=5&limit=6"])(
		"refuses %s with 400",
		async (query) => {
			expectError(await get(`/v1/exchange-rates?${query}`), 400, "validation_error");
		},
	);
});

describe("exchange rates and keys", () => {
	it("are created by admin and read-write keys, read by read-only keys, and refused to SDK keys", async () => {
		const readWrite = await createKey("read-write");
		const readOnly = await createKey("read-only");
		const sdk = await createKey("sdk");
		const made = await rate(
			{ base: "CAD", quote: "MXN", rate: 13.2, effective_at: "2026-02-01T00:00:00Z" },
			readWrite,
		);
		expectError(
			await post("/v1/exchange-rates", { base: "CAD", quote: "MXN", rate: 13.3 }, { key: readOnly }),
			403,
			"forbidden",
		);
		expectError(
			await post("/v1/exchange-rates", { base: "CAD", quote: "MXN", rate: 13.3 }, { key: sdk }),
			403,
			"forbidden",
		);
		expectError(await get("/v1/exchange-rates", { key: sdk }), 403, "forbidden");
		const read = await get("/v1/exchange-rates?base=CAD&quote=MXN", { key: readOnly });
		expect(read.status).toBe(200);
		expect(read.body).toEqual(made);
		expectError(await get("/v1/exchange-rates", { key: null }), 401, "unauthorized");
	});

	it("belong to their environment", async () => {
		const testKey = await createKey("admin", "test");
		await rate({ base: "BRL", quote: "ARS", rate: 180, effective_at: "2026-01-01T00:00:00Z" });
		expectError(await get("/v1/exchange-rates?base=BRL&quote=ARS", { key: testKey }), 404, "not_found");
		const mine = await rate(
			{ base: "BRL", quote: "ARS", rate: 181, effective_at: "2026-01-01T00:00:00Z" },
			testKey,
		);
		expect((await get("/v1/exchange-rates?base=BRL&quote=ARS", { key: testKey })).body).toEqual(mine);
		expect((await get("/v1/exchange-rates?base=BRL&quote=ARS")).body.rate).toBe(180);
		const testList = await get("/v1/exchange-rates?limit=100", { key: testKey });
		expect(testList.body.exchange_rates.map((r: { id: string }) => r.id)).toEqual([mine.id]);
	});
});
