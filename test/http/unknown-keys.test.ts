import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Db } from "../../src/db/client";
import { database } from "../../src/db/client";
import type { Env } from "../../src/env";
import {
	authenticate,
	OPERATOR_KEY_ID,
	UNKNOWN_KEY_CACHE_SIZE,
	UNKNOWN_KEY_TTL_MS,
	unknownKeyCount,
} from "../../src/http/auth";
import { ADMIN_KEY, createKey, del, expectError, get } from "../helpers";

// A caller without a key of ours must not cost a D1 read per request: unknown keys are remembered briefly.

afterEach(() => {
	vi.restoreAllMocks();
});

const unknownKey = () => `sk_api_unknown${crypto.randomUUID().replaceAll("-", "")}`;

/** A Db whose key lookup finds nothing, counting the lookups. */
function emptyKeyTable() {
	const lookups = { count: 0 };
	const db = {
		select: () => ({
			from: () => ({
				where: () => ({
					limit: async () => {
						lookups.count++;
						return [];
					},
				}),
			}),
		}),
	} as unknown as Db;
	return { lookups, db: () => db };
}

const attempt = (key: string, db: () => Db) =>
	authenticate(`Bearer ${key}`, env as Env, db, () => {}).then(
		() => "ok",
		(error: Error) => error.message,
	);

describe("unknown keys", () => {
	it("are looked up once within the time they are remembered, then again", async () => {
		const { lookups, db } = emptyKeyTable();
		const key = unknownKey();
		for (let i = 0; i < 50; i++) expect(await attempt(key, db)).toMatch(/unknown or has been revoked/);
		expect(lookups.count).toBe(1);

		const later = Date.now() + UNKNOWN_KEY_TTL_MS + 1;
		vi.spyOn(Date, "now").mockReturnValue(later);
		await attempt(key, db);
		expect(lookups.count).toBe(2);
	});

	it("are remembered up to a bound, the oldest forgotten first", async () => {
		const { lookups, db } = emptyKeyTable();
		const first = unknownKey();
		await attempt(first, db);
		for (let i = 0; i < UNKNOWN_KEY_CACHE_SIZE; i++)
			await attempt(`sk_api_filler${i.toString().padStart(8, "0")}`, db);
		expect(unknownKeyCount()).toBe(UNKNOWN_KEY_CACHE_SIZE);
		const before = lookups.count;
		await attempt(first, db);
		expect(lookups.count).toBe(before + 1);
	});

	it("make one D1 read for many requests through the Worker", async () => {
		const prepare = vi.spyOn(env.DB, "prepare");
		const key = unknownKey();
		for (let i = 0; i < 20; i++) expectError(await get("/v1/agents", { key }), 401, "unauthorized");
		const keyLookups = prepare.mock.calls.filter(([sql]) => /from "api_keys"/i.test(sql));
		expect(keyLookups).toHaveLength(1);
	});

	it("do not delay a new key, nor a revoked key's 401", async () => {
		const key = await createKey("read-only");
		expect((await get("/v1/agents", { key })).status).toBe(200);
		const id = (await get("/v1/api-keys?limit=100")).body.api_keys.find((k: { prefix: string }) =>
			key.startsWith(k.prefix.replace("…", "")),
		).id;
		expect((await del(`/v1/api-keys/${id}`)).status).toBe(204);
		expectError(await get("/v1/agents", { key }), 401, "unauthorized");
		expectError(await get("/v1/agents", { key }), 401, "unauthorized");
	});
});

describe("the operator key", () => {
	it("is recognised by its hash, and a key of the same length that differs is not", async () => {
		const db = () => database(env.DB);
		const principal = await authenticate(`Bearer ${ADMIN_KEY}`, env as Env, db, () => {});
		expect(principal).toEqual({
			type: "api",
			keyId: OPERATOR_KEY_ID,
			environment: "live",
			permission: "admin",
		});
		const lastChar = ADMIN_KEY.at(-1) === "a" ? "b" : "a";
		const almost = `${ADMIN_KEY.slice(0, -1)}${lastChar}`;
		expect(await attempt(almost, db)).toMatch(/unknown or has been revoked/);
	});
});
