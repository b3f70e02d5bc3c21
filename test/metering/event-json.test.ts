import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/durable-objects/usage-accumulator/types";
import { newId } from "../../src/lib/ids";
import { eventJson, eventJsonWriter, eventView } from "../../src/metering/events";
import { meteringEvent } from "../support/event-arbitraries";

// Events as the accumulator answers them.
const storedEvent: fc.Arbitrary<StoredEvent> = fc
	.tuple(meteringEvent, fc.option(fc.constant(newId("sub")), { nil: null }))
	.map(([event, subscriptionId]) => ({ ...event, subscriptionId }));

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
