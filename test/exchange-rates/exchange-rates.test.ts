import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, post } from "../helpers";

const HOUR = 60 * 60 * 1000;
const isoIn = (ms: number) => new Date(Date.now() + ms).toISOString();

async function storedRates(): Promise<number> {
	const row = await env.DB.prepare("SELECT count(*) AS n FROM exchange_rates").first<{ n: number }>();
	return row?.n ?? 0;
}

async function addRate(body: Record<string, unknown>, key?: string) {
	const response = await post("/v1/exchange-rates", body, key === undefined ? undefined : { key });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body as { id: string; rate: number; effective_at: string };
}

describe("POST /v1/exchange-rates", () => {
	it("creates a rate effective now by default (201), stored as exact text", async () => {
		const before = Date.now();
		const response = await post("/v1/exchange-rates", { base: "USD", quote: "EUR", rate: 0.923456789012 });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body).toMatchObject({ base: "USD", quote: "EUR", rate: 0.923456789012 });
		expect(Object.keys(response.body).sort()).toEqual(
			["base", "created_at", "effective_at", "id", "quote", "rate"].sort(),
		);
		expect(response.body.id).toMatch(/^xr_[0-9a-z]{26}$/);
		expect(Date.parse(response.body.effective_at)).toBeGreaterThanOrEqual(before - 1000);
		expect(response.body.effective_at).toBe(response.body.created_at);
		const row = await env.DB.prepare("SELECT rate, environment FROM exchange_rates WHERE id = ?")
			.bind(response.body.id)
			.first<{ rate: string; environment: string }>();
		expect(row).toEqual({ rate: "0.923456789012", environment: "live" });
	});

	it("takes an effective_at in the past or the future, with any offset", async () => {
		const past = await addRate({
			base: "GBP",
			quote: "JPY",
			rate: 190,
			effective_at: "2020-01-01T01:00:00+01:00",
		});
		expect(past.effective_at).toBe("2020-01-01T00:00:00.000Z");
		const future = await addRate({
			base: "GBP",
			quote: "JPY",
			rate: 200,
			effective_at: "2099-01-01T00:00:00Z",
		});
		expect(future.effective_at).toBe("2099-01-01T00:00:00.000Z");
	});

	it.each([
		["base equal to quote", { quote: "USD" }, "quote"],
		["a lower-case code", { base: "usd" }, "base"],
		["a code that is not ISO 4217", { quote: "XYZ" }, "quote"],
		["a rate of 0", { rate: 0 }, "rate"],
		["a negative rate", { rate: -1.5 }, "rate"],
		["a rate with 13 decimals", { rate: 0.0000000000001 }, "rate"],
		["a rate over 1e15", { rate: 1e16 }, "rate"],
		["a rate as a string", { rate: "0.92" }, "rate"],
		["an effective_at without offset", { effective_at: "2026-12-01T00:00:00" }, "effective_at"],
		["an unknown field", { id: "xr_01jd0000000000000000000000" }, "id"],
	])("refuses %s (400) and stores nothing", async (_, change, path) => {
		const before = await storedRates();
		const response = await post("/v1/exchange-rates", { base: "USD", quote: "CHF", rate: 0.9, ...change });
		const error = expectError(response, 400, "validation_error");
		expect(error.details?.map((d) => d.path).join(" ")).toContain(path);
		expect(await storedRates()).toBe(before);
	});

	it("is for read-write and admin keys", async () => {
		for (const kind of ["read-only", "sdk"] as const) {
			const key = await createKey(kind);
			expectError(
				await post("/v1/exchange-rates", { base: "USD", quote: "SEK", rate: 10 }, { key }),
				403,
				"forbidden",
			);
		}
		await addRate({ base: "USD", quote: "SEK", rate: 10.5 }, await createKey("read-write"));
		await addRate({ base: "USD", quote: "SEK", rate: 10.6 }, await createKey("admin"));
		const listed = await get("/v1/exchange-rates?base=USD&quote=SEK", { key: await createKey("read-only") });
		expect(listed.status).toBe(200);
	});

	it("writes an audit record", async () => {
		const rate = await addRate({ base: "USD", quote: "NOK", rate: 11 });
		const log = await get(`/v1/audit-log?resource_id=${rate.id}`);
		expect(log.status, JSON.stringify(log.body)).toBe(200);
		expect(log.body.records.map((r: { action: string }) => r.action)).toEqual(["exchange_rate.created"]);
	});
});

describe("GET /v1/exchange-rates", () => {
	it("answers the rate in effect at `at`: the latest effective_at at or before it, as created", async () => {
		const older = await addRate({
			base: "EUR",
			quote: "GBP",
			rate: 0.85,
			effective_at: "2026-01-01T00:00:00Z",
		});
		const newer = await addRate({
			base: "EUR",
			quote: "GBP",
			rate: 0.875,
			effective_at: "2026-06-01T00:00:00Z",
		});
		const future = await addRate({ base: "EUR", quote: "GBP", rate: 0.9, effective_at: isoIn(24 * HOUR) });
		const at = async (instant?: string) => {
			const query = instant === undefined ? "" : `&at=${encodeURIComponent(instant)}`;
			return get(`/v1/exchange-rates?base=EUR&quote=GBP${query}`);
		};
		expect((await at("2026-03-01T00:00:00Z")).body).toEqual(older);
		expect((await at("2026-06-01T00:00:00Z")).body).toEqual(newer);
		expect((await at("2026-06-01T02:00:00+02:00")).body).toEqual(newer);
		expect((await at()).body).toEqual(newer);
		expect((await at(isoIn(48 * HOUR))).body).toEqual(future);
		expectError(await at("2025-12-31T23:59:59.999Z"), 404, "not_found");
		// The reverse pair is a pair of its own: reading it never inverts a rate.
		expectError(await get("/v1/exchange-rates?base=GBP&quote=EUR"), 404, "not_found");
	});

	it("lists every rate newest effective_at first, with §4 pagination", async () => {
		const key = await createKey("admin", "test");
		const a = await addRate(
			{ base: "USD", quote: "EUR", rate: 1, effective_at: "2026-03-01T00:00:00Z" },
			key,
		);
		const b = await addRate(
			{ base: "USD", quote: "JPY", rate: 150, effective_at: "2026-05-01T00:00:00Z" },
			key,
		);
		const c = await addRate(
			{ base: "EUR", quote: "USD", rate: 1.1, effective_at: "2026-04-01T00:00:00Z" },
			key,
		);
		const all = await get("/v1/exchange-rates", { key });
		expect(all.status).toBe(200);
		expect(all.body).toEqual({ exchange_rates: [b, c, a], total: 3, limit: 20, offset: 0 });
		const page = await get("/v1/exchange-rates?limit=1&offset=1", { key });
		expect(page.body).toEqual({ exchange_rates: [c], total: 3, limit: 1, offset: 1 });
		const usd = await get("/v1/exchange-rates?base=USD", { key });
		expect(usd.body.exchange_rates).toEqual([b, a]);
		// The live environment's rates are not the test environment's.
		expect((await get("/v1/exchange-rates?base=USD&quote=JPY", { key })).body).toEqual(b);
		expectError(await get("/v1/exchange-rates?base=USD&quote=JPY"), 404, "not_found");
	});

	it.each([
		["base equal to quote", "base=USD&quote=USD"],
		["a code that is not ISO 4217", "base=USD&quote=ABC"],
		["a lower-case code", "base=usd&quote=EUR"],
		["an `at` that is not a date-time", "base=USD&quote=EUR&at=yesterday"],
		["a limit of 0", "limit=0"],
		["a repeated base", "base=USD&base=EUR&quote=GBP"],
	])("refuses %s (400)", async (_, query) => {
		expectError(await get(`/v1/exchange-rates?${query}`), 400, "validation_error");
	});
});
