// Bench data: a priced plan, accounts, subscriptions with one instance each, and usage sent in batches.
import { apiClient, inParallel } from "./api.mjs";

export const PLAN = {
	name: "Bench plan",
	base_fee: 49,
	charges: [
		{
			metric: "llm_calls",
			source: { kind: "action", type: "llm_call", aggregate: "count" },
			model: "tiered",
			tiers: [
				{ up_to: 1000, unit_price: 0.01 },
				{ up_to: null, unit_price: 0.005 },
			],
		},
		{
			metric: "tokens",
			source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
			model: "per_unit",
			unit_price: 0.000002,
			included_quantity: 100000,
		},
	],
};

// The same plan priced per model: ten filtered charges over the same llm_call events (one of them matching the
// bench's "small" model), for the ingest comparison with filters and alerts (§16, §18).
export const FILTERED_PLAN = {
	name: "Bench plan per model",
	base_fee: 49,
	charges: ["small", "medium", "large", "xl", "vision", "audio", "embed", "rerank", "code", "tiny"].map(
		(model, i) => ({
			metric: `tokens_${model}`,
			source: {
				kind: "action",
				type: "llm_call",
				aggregate: i % 5 === 4 ? "max" : "sum",
				field: "tokens",
				filter: { model },
			},
			model: "per_unit",
			unit_price: (i + 1) / 1_000_000,
		}),
	),
};

// Instance keys must differ between provisionings of the same environment: an instance is in one active
// subscription at a time.
let provisionings = 0;

/** An environment with `subscriptions` subscriptions (ten per account), each holding one instance. */
export async function provisionEnvironment(base, adminKey, environment, subscriptions, ratePlan = PLAN) {
	const admin = apiClient(base, adminKey);
	const envAdminKey =
		environment === "live"
			? adminKey
			: (await admin("POST", "/v1/api-keys", { type: "api", permission: "admin", environment })).key;
	const api = apiClient(base, envAdminKey);
	const sdkKey = (await api("POST", "/v1/api-keys", { type: "sdk", environment })).key;
	const plan = await api("POST", "/v1/pricing/rate-plans", ratePlan);
	const accountCount = Math.ceil(subscriptions / 10);
	const accounts = await inParallel([...Array(accountCount).keys()], 16, (i) =>
		api("POST", "/v1/accounts", { name: `Customer ${i}`, email: `billing${i}@bench.example` }),
	);
	const round = provisionings++;
	const instanceKeys = [...Array(subscriptions).keys()].map((i) => `${environment}-bench-${round}-${i}`);
	const subscriptionIds = await inParallel(instanceKeys, 16, async (key, i) => {
		const subscription = await api("POST", "/v1/subscriptions", {
			account_id: accounts[Math.floor(i / 10)].id,
			rate_plan_id: plan.id,
			agent_instance_ids: [key],
		});
		return subscription.id;
	});
	return {
		api,
		adminKey: envAdminKey,
		sdkKey,
		instanceKeys,
		subscriptionIds,
		plan,
		accountIds: accounts.map((a) => a.id),
	};
}

/**
 * `total` llm_call actions spread evenly over the instances, in batches of 1,000. Each batch carries the events
 * of a few neighbouring instances, as an agent's SDK sends its own buffer, rather than one event of each of a
 * thousand instances.
 */
export async function sendUsage(
	base,
	sdkKey,
	instanceKeys,
	total,
	concurrency = 4,
	onProgress,
	metadata = { tokens: 1200, model: "small" },
) {
	const sdk = apiClient(base, sdkKey);
	const batches = Math.ceil(total / 1000);
	const perBatch = Math.max(1, Math.ceil(instanceKeys.length / batches));
	let sent = 0;
	await inParallel([...Array(batches).keys()], concurrency, async (b) => {
		const size = Math.min(1000, total - b * 1000);
		const events = Array.from({ length: size }, (_, i) => ({
			agent_key: instanceKeys[(b * perBatch + (i % perBatch)) % instanceKeys.length],
			action_type: "llm_call",
			metadata,
		}));
		await sdk("POST", "/v1/actions/batch", { events });
		sent += size;
		onProgress?.(sent);
	});
	return sent;
}

// An LLM call the catalog prices (openai/gpt-4o), costed by the accumulator at ingest; and the same call with no
// model, which nothing prices: the costed scenario's two sides.
export const COSTED_CALL = {
	model: "gpt-4o",
	input_tokens: 1200,
	output_tokens: 300,
	cached_input_tokens: 200,
};
export const UNCOSTED_CALL = { input_tokens: 1200, output_tokens: 300, cached_input_tokens: 200 };

/** Two alerts per subscription of a provisioned environment, thresholds far above what the bench sends. */
export async function inParallelAlerts({ api, subscriptionIds }) {
	await inParallel(subscriptionIds, 16, async (subscriptionId) => {
		await api("POST", "/v1/alerts", {
			subscription_id: subscriptionId,
			metric: "tokens_small",
			threshold: 1e12,
		});
		await api("POST", "/v1/alerts", { subscription_id: subscriptionId, threshold: 1e9, block: true });
	});
}

/** One subscription holding `instances` instances: the hot subscription of a busy customer, in `shards` shards. */
export async function provisionHotSubscription(base, adminKey, instances, shards = 1) {
	const api = apiClient(base, adminKey);
	const sdkKey = (await api("POST", "/v1/api-keys", { type: "sdk" })).key;
	const plan = await api("POST", "/v1/pricing/rate-plans", PLAN);
	const account = await api("POST", "/v1/accounts", { name: "Hot customer", email: "hot@bench.example" });
	const round = provisionings++;
	const instanceKeys = [...Array(instances).keys()].map((i) => `hot-${round}-${i}`);
	const subscription = await api("POST", "/v1/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: instanceKeys,
		shards,
	});
	return { sdkKey, instanceKeys, subscriptionId: subscription.id };
}
