import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/durable-objects/usage-accumulator/types";
import { newId } from "../../src/lib/ids";
import { eventJson, eventJsonWriter, eventView } from "../../src/metering/events";

// Events as the accumulator answers them: ids and timestamps made by the service, the rest as sent.
const metadataValue = fc.oneof(
	fc.string(),
	fc.double({ min: -1e15, max: 1e15, noNaN: true }),
	fc.integer(),
	fc.boolean(),
	fc.constant(null),
);
const storedEvent: fc.Arbitrary<StoredEvent> = fc.record({
	id: fc.constantFrom("act", "out").map((prefix) => newId(prefix as "act" | "out")),
	kind: fc.constantFrom("action" as const, "outcome" as const),
	agentKey: fc.constantFrom("agent-1", "a.b:c_d-9", "k".repeat(200)),
	type: fc.constantFrom("llm_call", "hire", "a.b:c_d-9"),
	value: fc.option(fc.constantFrom("0", "1", "12.5", "0.000001", "999999999999999"), { nil: null }),
	metadata: fc.option(
		fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), metadataValue, { maxKeys: 5 }),
		{
			nil: null,
		},
	),
	timestamp: fc
		.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) })
		.map((d) => d.toISOString()),
	receivedAt: fc
		.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) })
		.map((d) => d.toISOString()),
	idempotencyKey: fc.option(fc.string(), { nil: null }),
	subscriptionId: fc.option(fc.constant(newId("sub")), { nil: null }),
});

describe("eventJson", () => {
	it("is JSON.stringify of the event's view, byte for byte, for actions and outcomes of any metadata", () => {
		fc.assert(
			fc.property(
				storedEvent,
				fc.constantFrom("processed" as const, "duplicate" as const),
				(event, status) => {
					expect(eventJson(event, status)).toBe(JSON.stringify(eventView(event, status)));
				},
			),
			{ numRuns: 500 },
		);
	});

	it("stays so event after event through one writer, as a batch's answer is written", () => {
		const sameAsBefore = fc.tuple(fc.boolean(), fc.boolean(), fc.boolean());
		fc.assert(
			fc.property(
				fc.array(
					fc.tuple(storedEvent, sameAsBefore, fc.constantFrom("processed" as const, "duplicate" as const)),
					{
						maxLength: 12,
					},
				),
				(steps) => {
					const json = eventJsonWriter();
					let previous: StoredEvent | undefined;
					for (const [drawn, [sameKey, sameType, sameSubscription], status] of steps) {
						// Runs of equal agent keys, types and subscriptions, as in a batch, and changes between them.
						const event = {
							...drawn,
							agentKey: sameKey && previous ? previous.agentKey : drawn.agentKey,
							type: sameType && previous ? previous.type : drawn.type,
							subscriptionId: sameSubscription && previous ? previous.subscriptionId : drawn.subscriptionId,
						};
						expect(json(event, status)).toBe(JSON.stringify(eventView(event, status)));
						previous = event;
					}
				},
			),
			{ numRuns: 500 },
		);
	});
});
