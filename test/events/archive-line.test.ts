import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { archiveLineWriter, eventViewOf } from "../../src/durable-objects/usage-accumulator/parts/archive";
import type { EventRow } from "../../src/durable-objects/usage-accumulator/storage/event-rows";
import { newId } from "../../src/lib/ids";
import { decimalValue, eventId, isoDate, metadata } from "../support/event-arbitraries";

// Rows as an accumulator stores them.
const row: fc.Arbitrary<EventRow> = fc.tuple(
	eventId,
	fc.constantFrom("action", "outcome"),
	fc.oneof(fc.constantFrom("agent-1", "agent-2", "k".repeat(200)), fc.string({ minLength: 1 })),
	fc.oneof(fc.constantFrom("llm_call", "hire"), fc.string({ minLength: 1 })),
	fc.option(decimalValue, { nil: null }),
	fc.option(metadata, { nil: null }),
	isoDate,
	isoDate,
	fc.option(fc.string(), { nil: null }),
);

describe("an archive line", () => {
	it("is JSON.stringify of the event's view, byte for byte, row after row of any kind, value and metadata", () => {
		fc.assert(
			fc.property(
				fc.array(row, { maxLength: 12 }),
				fc.option(fc.constant(newId("sub")), { nil: null }),
				fc.option(isoDate, { nil: null }),
				(rows, subscriptionId, billableFrom) => {
					const lineOf = archiveLineWriter(subscriptionId, billableFrom);
					for (const r of rows) {
						expect(lineOf(r)).toBe(JSON.stringify(eventViewOf(r, subscriptionId, billableFrom)));
					}
				},
			),
			{ numRuns: 500 },
		);
	});
});
