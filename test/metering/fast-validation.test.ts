import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EventKind } from "../../src/durable-objects/usage-accumulator/types";
import { ActionBatchInput, ActionInput, OutcomeBatchInput, OutcomeInput } from "../../src/metering/events";
import { plainBatch, plainEvent } from "../../src/metering/fast-validation";
import { expectError, get, post } from "../helpers";
import { uniqueKey } from "../subscriptions/fixtures";

const MINUTE = 60_000;
const isoIn = (ms: number) => new Date(Date.now() + ms).toISOString();
const schemaOf = (kind: EventKind) => (kind === "action" ? ActionBatchInput : OutcomeBatchInput);

// ---- arbitraries: mostly valid values, with the invalid ones the schemas must catch mixed in -------------

/** A valid value nine times in ten, else one of the invalid ones. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>) =>
	fc.oneof({ weight: 9, arbitrary: valid }, { weight: 1, arbitrary: invalid });

const key = mostly(
	fc.constantFrom("agent-1", "a.b:c_d-9", "k".repeat(200)),
	fc.constantFrom("", "bad key", "k".repeat(201), "é", 7),
);
const eventType = mostly(
	fc.constantFrom("llm_call", "hire", "t".repeat(100)),
	fc.constantFrom("", "a/b", "t".repeat(101)),
);
const idempotencyKey = mostly(
	fc.string({ minLength: 1, maxLength: 20 }),
	fc.constantFrom("", "i".repeat(256), 5),
);
const timestamp = mostly(
	fc.constantFrom(isoIn(-MINUTE), isoIn(-34 * 24 * 60 * MINUTE), "2026-11-21T10:00:00+01:00"),
	fc.constantFrom(isoIn(6 * MINUTE), isoIn(-36 * 24 * 60 * MINUTE), "2026-11-21T10:00:00", "yesterday", 12),
);
const scalar = mostly(
	fc.oneof(
		fc.string({ maxLength: 10 }),
		fc.double({ noNaN: true, noDefaultInfinity: true }),
		fc.integer(),
		fc.boolean(),
		fc.constant(null),
	),
	fc.constantFrom([1], { a: 1 }),
);
const metadataKey = mostly(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom("", "x".repeat(101)));
const metadata = mostly(
	fc.oneof(
		fc.dictionary(metadataKey, scalar, { maxKeys: 6 }),
		fc.record(
			{
				cost: mostly(
					fc.oneof(fc.double({ min: 0, max: 10, noNaN: true }), fc.constantFrom(1e-12, 0.123456789012, 1e15)),
					// Money takes at most 12 decimal places.
					fc.constantFrom(-1, "0.5", 1e-20, 1e-13, 0.1234567890123456, 1e15 + 2),
				),
				cost_currency: mostly(fc.constantFrom("USD", "EUR", "JPY"), fc.constantFrom("usd", 5)),
				cost_type: mostly(fc.constantFrom("gpu", "c".repeat(100)), fc.constantFrom("", "c".repeat(101), 3)),
				tokens: fc.nat(),
				model: mostly(fc.constantFrom("gpt-4o", "claude-sonnet-4-5"), fc.constantFrom(4, true, null)),
				provider: mostly(fc.constantFrom("openai", "anthropic"), fc.constantFrom(1, false)),
				input_tokens: mostly(fc.nat(), fc.constantFrom(-1, "12", null)),
				cached_input_tokens: mostly(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constantFrom(-0.5, "x")),
				output_tokens: mostly(fc.nat(), fc.constantFrom(-3, true)),
				reasoning_tokens: mostly(fc.nat(), fc.constantFrom(-1, null)),
			},
			{ requiredKeys: [] },
		),
		fc.constant(null),
	),
	fc.constantFrom(
		[1],
		"text",
		{ big: "x".repeat(8200) },
		// Around 8 KiB as JSON: 8,190 and 8,194 bytes, by plain, two-byte and escaped characters.
		{ big: "x".repeat(8180) },
		{ big: "x".repeat(8184) },
		{ big: "é".repeat(4090) },
		{ big: "é".repeat(4092) },
		{ big: "\u0001".repeat(1363) },
		{ big: "\u0001".repeat(1364) },
		Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
	),
);
const outcomeValue = mostly(
	fc.oneof(fc.double({ min: 0, max: 1e9, noNaN: true }), fc.constantFrom(1e15, 999999999999999.9)),
	// §1: past the 1e15 bound, both paths must refuse
	fc.constantFrom(-1, "5", 1e15 + 1, 1e16, 1e308, -0.5),
);

function eventOf(kind: EventKind) {
	const typeField = kind === "action" ? "action_type" : "outcome_type";
	const fields: Record<string, fc.Arbitrary<unknown>> = {
		agent_key: key,
		[typeField]: eventType,
		...(kind === "outcome" ? { value: outcomeValue } : {}),
		metadata,
		timestamp,
		idempotency_key: idempotencyKey,
	};
	const required = kind === "outcome" ? ["agent_key", typeField, "value"] : ["agent_key", typeField];
	return fc.record(fields, { requiredKeys: required }).chain((event) =>
		// Now and then a field the schema does not know, or one it requires left out.
		fc.constantFrom<Record<string, unknown>>(
			event,
			event,
			event,
			event,
			event,
			event,
			event,
			event,
			{ ...event, customer: "x" },
			{ ...event, agent_key: undefined },
		),
	);
}

const body = (kind: EventKind) =>
	mostly(
		fc.array(eventOf(kind), { minLength: 1, maxLength: 3 }).map((events) => ({ events })),
		fc.constantFrom({ events: [] }, { events: "x" }, [], null, { events: [{}], extra: 1 }),
	);

describe("the fast path of batch validation", () => {
	for (const kind of ["action", "outcome"] as const) {
		it(`accepts only what the ${kind} batch schema accepts, and answers what it answers`, () => {
			let taken = 0;
			fc.assert(
				fc.property(body(kind), fc.option(idempotencyKey.map(String), { nil: undefined }), (raw, header) => {
					// As the route sees it: parsed from JSON text.
					const input = JSON.parse(JSON.stringify(raw));
					const fast = plainBatch(kind, input, header);
					if (fast === null) return;
					taken++;
					const parsed = schemaOf(kind).safeParse(JSON.parse(JSON.stringify(raw)));
					expect(parsed.success).toBe(true);
					expect(fast).toEqual(parsed.data?.events);
					if (header !== undefined) expect(header.length).toBeGreaterThanOrEqual(1);
				}),
				{ numRuns: 2000 },
			);
			// The property says nothing unless the fast path is taken often.
			expect(taken).toBeGreaterThan(100);
		});
	}

	for (const kind of ["action", "outcome"] as const) {
		it(`accepts only the single ${kind}s its schema accepts, and answers what it answers`, () => {
			let taken = 0;
			const single = mostly(eventOf(kind), fc.constantFrom([], null, "x", { events: [] }));
			fc.assert(
				fc.property(single, fc.option(idempotencyKey.map(String), { nil: undefined }), (raw, header) => {
					const fast = plainEvent(kind, JSON.parse(JSON.stringify(raw)), header);
					if (fast === null) return;
					taken++;
					const schema = kind === "action" ? ActionInput : OutcomeInput;
					const parsed = schema.safeParse(JSON.parse(JSON.stringify(raw)));
					expect(parsed.success).toBe(true);
					expect(fast).toEqual(parsed.data);
				}),
				{ numRuns: 2000 },
			);
			expect(taken).toBeGreaterThan(100);
		});
	}

	it("takes plain batches: timestamps, idempotency keys, reserved metadata, charset parameters", () => {
		const events = [
			{ agent_key: "a", action_type: "llm_call", metadata: { tokens: 1200, model: "small" } },
			{
				agent_key: "a",
				action_type: "llm_call",
				timestamp: isoIn(-MINUTE),
				idempotency_key: "k-1",
				metadata: { cost: 0.5, cost_currency: "EUR", cost_type: "gpu", cached: true, note: null },
			},
			{ agent_key: "b", action_type: "search", metadata: null },
		];
		expect(plainBatch("action", { events }, undefined)).toEqual(events);
		expect(
			plainBatch("outcome", { events: [{ agent_key: "a", outcome_type: "hire", value: 0 }] }, "h"),
		).toEqual([{ agent_key: "a", outcome_type: "hire", value: 0 }]);
	});

	it.each([
		["a bad Idempotency-Key header", { events: [{ agent_key: "a", action_type: "x" }] }, ""],
		[
			"a metadata key named __proto__",
			JSON.parse('{"events":[{"agent_key":"a","action_type":"x","metadata":{"__proto__":1}}]}'),
			undefined,
		],
		[
			"a number too large for a double",
			JSON.parse('{"events":[{"agent_key":"a","action_type":"x","metadata":{"n":1e999}}]}'),
			undefined,
		],
	])("leaves %s to the schema", (_, input, header) => {
		expect(plainBatch("action", input, header)).toBeNull();
	});
});

describe("single events through the fast path, over HTTP", () => {
	it("records a plain action and answers it as the schema path does", async () => {
		const agentKey = uniqueKey();
		const response = await post(
			"/v1/actions",
			{ agent_key: agentKey, action_type: "llm_call", metadata: { tokens: 3 } },
			{ headers: { "Content-Type": "application/json; charset=utf-8" } },
		);
		expect(response.status).toBe(201);
		expect(response.body).toMatchObject({
			agent_key: agentKey,
			action_type: "llm_call",
			metadata: { tokens: 3 },
		});
	});

	it("still words the errors of an event that is not plain", async () => {
		const error = expectError(
			await post("/v1/outcomes", { agent_key: "a", outcome_type: "hire", value: -1 }),
			400,
			"validation_error",
		);
		expect(error.details?.map((d) => d.path)).toEqual(["value"]);
	});
});

describe("batches through the fast path, over HTTP", () => {
	it("answers a plain batch sent with a charset like any other", async () => {
		const agentKey = uniqueKey();
		const response = await post(
			"/v1/actions/batch",
			{ events: [{ agent_key: agentKey, action_type: "llm_call", metadata: { tokens: 3 } }] },
			{ headers: { "Content-Type": "application/json; charset=utf-8" } },
		);
		expect(response.status).toBe(201);
		expect(response.body.results[0]).toMatchObject({ agent_key: agentKey, metadata: { tokens: 3 } });
	});

	it("still words the errors of a batch that is not plain", async () => {
		const error = expectError(
			await post("/v1/actions/batch", {
				events: [
					{ agent_key: "a", action_type: "llm_call" },
					{ agent_key: "a", action_type: "llm_call", metadata: { n: { nested: true } } },
				],
			}),
			400,
			"validation_error",
		);
		expect(error.details?.map((d) => d.path)).toEqual(["events[1].metadata.n"]);
	});

	it("answers 415 for a JSON body under a media type the route does not declare", async () => {
		const error = expectError(
			await post("/v1/actions/batch", undefined, {
				raw: JSON.stringify({ events: [{ agent_key: "a", action_type: "x" }] }),
				headers: { "Content-Type": "application/json;" },
			}),
			415,
			"unsupported_media_type",
		);
		expect(error.message).toContain("JSON");
	});
});

describe("metadata.cost is money, through either path", () => {
	it.each([
		[1e-20, "12 decimal places"],
		[1e-13, "12 decimal places"],
		[0.1234567890123456, "12 decimal places"],
		[-0.01, "≥ 0"],
		[1e15 + 2, "between -1e15 and 1e15"],
	])("refuses a cost of %s with nothing stored", async (cost, reason) => {
		const agentKey = uniqueKey();
		const single = expectError(
			await post("/v1/actions", { agent_key: agentKey, action_type: "llm_call", metadata: { cost } }),
			400,
			"validation_error",
		);
		expect(single.details?.map((d) => d.path)).toEqual(["metadata.cost"]);
		const batch = expectError(
			await post("/v1/actions/batch", {
				events: [
					{ agent_key: agentKey, action_type: "llm_call", metadata: { cost: 0.5 } },
					{ agent_key: agentKey, action_type: "llm_call", metadata: { cost } },
				],
			}),
			400,
			"validation_error",
		);
		expect(batch.details?.map((d) => d.path)).toEqual(["events[1].metadata.cost"]);
		expect(batch.details?.[0]?.message).toContain(reason);
		const usage = await get(`/v1/usage?agent_key=${agentKey}`);
		expect(usage.body.usage).toEqual([]);
	});

	it.each([1e-12, 0.123456789012, 1e15, 0])("accepts a cost of %s", async (cost) => {
		const response = await post("/v1/actions", {
			agent_key: uniqueKey(),
			action_type: "llm_call",
			metadata: { cost },
		});
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body.metadata).toEqual({ cost });
	});
});
