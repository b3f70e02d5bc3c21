import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MeteringEvent } from "../../src/durable-objects/usage-accumulator/types";
import { decodeEvents, encodeEvents } from "../../src/durable-objects/usage-accumulator/wire";
import { newId } from "../../src/lib/ids";
import { isoDate, meteringEvent } from "../support/event-arbitraries";

/**
 * Events of one request: most received at one instant, most without a timestamp of their own (it is then the
 * time of receipt), some of both kinds of exception.
 */
const requestEvents = fc
	.tuple(isoDate, fc.array(fc.tuple(meteringEvent, fc.boolean(), fc.boolean()), { maxLength: 40 }))
	.map(([receivedAt, events]) =>
		events.map(([event, sameReceipt, ownTimestamp]) => {
			const received = sameReceipt ? receivedAt : event.receivedAt;
			return { ...event, receivedAt: received, timestamp: ownTimestamp ? event.timestamp : received };
		}),
	);

describe("events on their way to an accumulator", () => {
	it("arrive as they were sent, whatever their times, kinds, values and metadata", () => {
		fc.assert(
			fc.property(requestEvents, (events) => {
				expect(decodeEvents(encodeEvents(events))).toStrictEqual(events);
			}),
			{ numRuns: 500 },
		);
	});

	it("are read in the form a Worker of the version before sends: a JSON array of the event objects", () => {
		fc.assert(
			fc.property(requestEvents, (events) => {
				expect(decodeEvents(JSON.stringify(events))).toStrictEqual(events);
			}),
			{ numRuns: 100 },
		);
	});

	it("take about half the text of the event objects for a batch of actions", () => {
		const receivedAt = "2026-11-23T08:00:00.000Z";
		const batch: MeteringEvent[] = Array.from({ length: 1000 }, (_, i) => ({
			id: newId("act"),
			kind: "action",
			agentKey: `agent-${i % 8}`,
			type: "llm_call",
			value: null,
			metadata: { tokens: 1200, model: "small" },
			timestamp: receivedAt,
			receivedAt,
			idempotencyKey: null,
		}));
		const ratio = encodeEvents(batch).length / JSON.stringify(batch).length;
		expect(ratio).toBeLessThan(0.55);
	});
});
