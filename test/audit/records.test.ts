import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, createKey, patch, post } from "../helpers";

async function recordsOf(resourceId: string) {
	const { results } = await env.DB.prepare("SELECT * FROM audit_records WHERE resource_id = ? ORDER BY seq")
		.bind(resourceId)
		.all<Record<string, unknown>>();
	return results.map((r) => ({ ...r, changes: JSON.parse(r.changes as string) }));
}

describe("audit records", () => {
	it("an agent's create and update, field by field, by the operator and by a read-write key", async () => {
		const created = await post(
			"/v1/agents",
			{ name: "Scout", type: "custom" },
			{
				headers: { "X-Request-Id": "req-audit-1" },
			},
		);
		expect(created.status).toBe(201);
		const rw = await createKey("read-write");
		const updated = await patch(`/v1/agents/${created.body.id}`, { name: "Scout 2" }, { key: rw });
		expect(updated.status).toBe(200);
		const records = await recordsOf(created.body.id);
		expect(records).toHaveLength(2);
		expect(records[0]).toMatchObject({
			actor_type: "operator",
			key_id: null,
			key_prefix: `${ADMIN_KEY.slice(0, 13)}…`,
			action: "agent.created",
			resource_type: "agent",
			request_id: "req-audit-1",
			changes: { name: ["Scout"], type: ["custom"], description: [null] },
		});
		expect(records[1]).toMatchObject({
			actor_type: "api_key",
			key_prefix: `${rw.slice(0, 13)}…`,
			action: "agent.updated",
			changes: { name: ["Scout", "Scout 2"] },
		});
	});
});
