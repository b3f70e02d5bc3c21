/**
 * The zod-free timestamp check of event-records.ts, which the fast path uses before zod is loaded, accepts exactly
 * what events.ts's Timestamp schema accepts: zod's own pattern, and the same window around now.
 */
import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { ISO_DATETIME_WITH_OFFSET, isEventTimestamp } from "../../src/metering/event-records";
import { Timestamp } from "../../src/metering/events";

describe("isEventTimestamp", () => {
	it("uses zod's pattern for an ISO 8601 date-time with an offset", () => {
		const zods = z.iso.datetime({ offset: true })._zod.def.pattern;
		expect(ISO_DATETIME_WITH_OFFSET.source).toBe(zods?.source);
	});

	it("accepts and refuses what Timestamp does", () => {
		const now = Date.now();
		const iso = (ms: number) => new Date(ms).toISOString();
		for (const value of [
			iso(now),
			iso(now - 60_000).replace("Z", "+00:00"),
			iso(now + 4 * 60_000),
			iso(now + 6 * 60_000),
			iso(now - 34 * 86_400_000),
			iso(now - 36 * 86_400_000),
			"2026-02-30T10:00:00Z",
			"2024-02-29T10:00:00Z",
			iso(now).slice(0, 19),
			iso(now).slice(0, 10),
			`${iso(now).slice(0, 19)}+0100`,
			"not a date",
			"",
			42,
			null,
		]) {
			expect(isEventTimestamp(value), String(value)).toBe(Timestamp.safeParse(value).success);
		}
	});
});
