import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { archiveLineWriter, eventViewOf } from "../../src/durable-objects/usage-accumulator/archive";
import type { EventRow } from "../../src/durable-objects/usage-accumulator/flush";
import { newId } from "../../src/lib/ids";

// Rows as an accumulator stores them: ids and times made by the service, the rest as sent.
const isoDate = fc
	.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) })
	.map((d) => d.toISOString());
const metadataValue = fc.oneof(
	fc.string(),
	fc.double({ min: -1e15, max: 1e15, noNaN: true }),
	fc.integer(),
	fc.boolean(),
	fc.constant(null),
);
const row: fc.Arbitrary<EventRow> = fc.tuple(
	fc.constantFrom("act", "out").map((prefix) => newId(prefix as "act" | "out")),
	fc.constantFrom("action", "outcome"),
	fc.oneof(fc.constantFrom("agent-1", "agent-2", "k".repeat(200)), fc.string({ minLength: 1 })),
	fc.oneof(fc.constantFrom("llm_call", "hire"), fc.string({ minLength: 1 })),
	fc.option(fc.constantFrom("0", "1", "12.5", "0.000001", "999999999999999"), { nil: null }),
	fc.option(
		fc
			.dictionary(fc.string({ minLength: 1, maxLength: 10 }), metadataValue, { maxKeys: 5 })
			.map((metadata) => ({ ...metadata })),
		{ nil: null },
	),
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
