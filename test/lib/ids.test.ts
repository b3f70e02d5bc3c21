import { describe, expect, it } from "vitest";
import { newId } from "../../src/lib/ids";

describe("ids", () => {
	it("are a prefix and 26 Crockford base32 characters, the first 10 of them the creation time", () => {
		const before = Date.now();
		const id = newId("act");
		expect(id).toMatch(/^act_[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
		const time = [...id.slice(4, 14)].reduce(
			(ms, c) => ms * 32 + "0123456789abcdefghjkmnpqrstvwxyz".indexOf(c),
			0,
		);
		expect(time).toBeGreaterThanOrEqual(before);
		expect(time).toBeLessThanOrEqual(Date.now());
	});

	it("strictly increase within an isolate, many in one millisecond", () => {
		// The clock stands still without I/O here, so these all share a millisecond and carry across digits.
		const ids = Array.from({ length: 5_000 }, () => newId("evt").slice(4));
		for (let i = 1; i < ids.length; i++) expect((ids[i] as string) > (ids[i - 1] as string)).toBe(true);
		expect(new Set(ids).size).toBe(ids.length);
	});

	it("strictly increase from one millisecond to the next", async () => {
		const first = newId("req").slice(4);
		await new Promise((resolve) => setTimeout(resolve, 5));
		const second = newId("req").slice(4);
		expect(second > first).toBe(true);
		expect(second.slice(0, 10) > first.slice(0, 10)).toBe(true);
	});
});
