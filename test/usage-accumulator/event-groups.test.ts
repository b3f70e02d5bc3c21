import { describe, expect, it } from "vitest";
import {
	DEFAULT_CHUNK_LIMITS,
	type EventRow,
	eventGroups,
} from "../../src/durable-objects/usage-accumulator/storage/event-rows";

function row(i: number, metadataBytes = 20): EventRow {
	const at = "2026-01-01T00:00:00.000Z";
	return [
		`act_${String(i).padStart(26, "0")}`,
		"action",
		"k",
		"llm_call",
		null,
		{ m: "x".repeat(metadataBytes) },
		at,
		at,
		null,
	];
}

describe("event groups", () => {
	it("keep every row once, in order, in groups within their bytes and row count", () => {
		// Sizes vary from a few bytes to several times a group's bytes, in runs and alone.
		const rows = Array.from({ length: 500 }, (_, i) =>
			row(i, i % 97 === 0 ? 9000 : i % 7 === 0 ? 800 : 20 + (i % 13) * 30),
		);
		for (const limits of [DEFAULT_CHUNK_LIMITS, { events: 7, eventBytes: 1000, rows: 10 }]) {
			const groups = eventGroups(rows, limits);
			expect(groups.flatMap((group) => JSON.parse(group.json))).toEqual(rows);
			for (const group of groups) {
				expect(JSON.parse(group.json)).toHaveLength(group.size);
				expect(group.size).toBeLessThanOrEqual(limits.events);
				if (group.size > 1) expect(group.json.length).toBeLessThanOrEqual(Math.min(3500, limits.eventBytes));
			}
		}
	});

	it("fill groups of like rows close to their bytes", () => {
		const groups = eventGroups(
			Array.from({ length: 1000 }, (_, i) => row(i)),
			DEFAULT_CHUNK_LIMITS,
		);
		for (const group of groups.slice(0, -1)) expect(group.json.length).toBeGreaterThan(3500 - 200);
	});

	it("make no group of no rows", () => {
		expect(eventGroups([], DEFAULT_CHUNK_LIMITS)).toEqual([]);
	});
});
