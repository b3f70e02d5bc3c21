/**
 * After a custom price is created or deleted: the accumulators that costed LLM calls from the month of its
 * effective_from on are told to read their prices now, so they re-rate what they keep (usage-accumulator/rerate.ts)
 * within seconds instead of at their next count or flush. Best effort: one that is not told (its calls not flushed
 * yet, or a failed call) re-rates at its next refresh.
 */
import { and, eq, gte } from "drizzle-orm";
import { database } from "../db/client";
import { usageModelCosts, usageUnpriced } from "../db/schema";
import { accumulatorStub } from "../durable-objects/usage-accumulator/handle";
import type { Env, Environment } from "../env";
import { periodOf } from "../lib/time";

const AT_ONCE = 20;

export async function repriceAccumulators(env: Env, environment: Environment, from: string): Promise<void> {
	const db = database(env.DB);
	const period = periodOf(from);
	const [costed, unpriced] = await db.batch([
		db
			.selectDistinct({ accumulator: usageModelCosts.accumulator })
			.from(usageModelCosts)
			.where(and(eq(usageModelCosts.environment, environment), gte(usageModelCosts.period, period))),
		db
			.selectDistinct({ accumulator: usageUnpriced.accumulator })
			.from(usageUnpriced)
			.where(and(eq(usageUnpriced.environment, environment), gte(usageUnpriced.period, period))),
	]);
	const names = [...new Set([...costed, ...unpriced].map((row) => row.accumulator))];
	for (let i = 0; i < names.length; i += AT_ONCE) {
		await Promise.all(
			names.slice(i, i + AT_ONCE).map((name) =>
				accumulatorStub(env, name)
					.repriceNow()
					.catch((error: unknown) =>
						console.error(JSON.stringify({ at: "model-prices.reprice", name, error: String(error) })),
					),
			),
		);
	}
}
