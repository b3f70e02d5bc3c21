import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { post } from "../helpers";
import { sdkKey } from "../invoicing/fixtures";

/** Sends `count` llm_call actions of one instance in one batch, each with `metadata` when given. */
export async function sendCalls(agentKey: string, count: number, metadata?: Record<string, unknown>) {
	const events = Array.from({ length: count }, () => ({
		agent_key: agentKey,
		action_type: "llm_call",
		metadata,
	}));
	const response = await post("/v1/actions/batch", { events }, { key: await sdkKey() });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
}

/** The data of every alert.triggered written to the outbox for this alert. */
export async function triggeredEvents(alertId: string) {
	const { results } = await env.DB.prepare(
		"SELECT data FROM webhook_events WHERE event = 'alert.triggered' AND json_extract(data, '$.alert_id') = ?1",
	)
		.bind(alertId)
		.all<{ data: string }>();
	return results.map((row) => JSON.parse(row.data));
}
