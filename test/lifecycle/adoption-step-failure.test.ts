/**
 * An adoption step that fails answers its failure across the RPC boundary instead of throwing it
 * (usage-accumulator/step-failure.ts): a rejection leaving the object is printed by the runtime as an uncaught
 * exception with its stack, in a passing run, although the caller handles it. The client throws it again.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { accumulatorName, usageAccumulator } from "../../src/durable-objects/usage-accumulator/handle";
import { injectFaults } from "../../src/durable-objects/usage-accumulator/parts/faults";
import { instanceAccumulator, uniqueKey } from "../subscriptions/fixtures";

describe("a failed adoption step", () => {
	it("is answered by the object, not thrown across RPC, and rejected again by the client", async () => {
		const agentKey = uniqueKey();
		const stub = instanceAccumulator(agentKey);
		await runInDurableObject(stub, (_, state) => {
			injectFaults(state, {
				adoption: {
					afterSetAside: () => {
						throw new Error("evicted after setting the events aside");
					},
				},
			});
		});
		const from = new Date(Date.now() - 60_000).toISOString();
		const answer = await stub.setAsideFor("sub_0000000000000000000000000a", from, 1, null, 10);
		expect(answer).toEqual({ failed: "evicted after setting the events aside" });

		const client = usageAccumulator(env, accumulatorName("live", { agentKey }));
		const error = await client
			.setAsideFor({ subscriptionId: "sub_0000000000000000000000000b", from, generation: 1 }, null, 10)
			.catch((e: unknown) => e);
		expect(String(error)).toBe("Error: evicted after setting the events aside");
	});
});
