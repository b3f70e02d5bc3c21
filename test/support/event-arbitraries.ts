/**
 * fast-check arbitraries of events as the service keeps them: ids and times made by the service, the rest as a
 * client may send it. Shared by the tests that hold a hand-written serializer to JSON.stringify or a round trip.
 */
import fc from "fast-check";
import type { MeteringEvent } from "../../src/durable-objects/usage-accumulator/types";
import { newId } from "../../src/lib/ids";

export const isoDate = fc
	.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) })
	.map((d) => d.toISOString());

export const eventId = fc.constantFrom("act", "out").map((prefix) => newId(prefix as "act" | "out"));

export const decimalValue = fc.constantFrom("0", "1", "12.5", "0.000001", "999999999999999");

// -0 is left out: JSON writes it as 0, so no round trip through JSON keeps it, and no client can send it apart.
export const metadataValue = fc.oneof(
	fc.string(),
	fc.double({ min: -1e15, max: 1e15, noNaN: true }).filter((n) => !Object.is(n, -0)),
	fc.integer(),
	fc.boolean(),
	fc.constant(null),
);

/** Plain objects (fc.dictionary makes them without a prototype), without the one key JSON.parse would not keep. */
export const metadata = fc
	.dictionary(
		fc.string({ minLength: 1, maxLength: 10 }).filter((key) => key !== "__proto__"),
		metadataValue,
		{ maxKeys: 5 },
	)
	.map((entries) => ({ ...entries }));

/** An event as the Worker sends it to an accumulator. */
export const meteringEvent: fc.Arbitrary<MeteringEvent> = fc.record({
	id: eventId,
	kind: fc.constantFrom("action" as const, "outcome" as const),
	agentKey: fc.constantFrom("agent-1", "a.b:c_d-9", "k".repeat(200)),
	type: fc.constantFrom("llm_call", "hire", "a.b:c_d-9"),
	value: fc.option(decimalValue, { nil: null }),
	metadata: fc.option(metadata, { nil: null }),
	timestamp: isoDate,
	receivedAt: isoDate,
	idempotencyKey: fc.option(fc.string(), { nil: null }),
});
