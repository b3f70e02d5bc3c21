/**
 * What an audit record costs in D1, measured: N records written as requests write them, the database's size
 * read before and after (D1 reports it with every result). docs/audit-log.md quotes these figures.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { actingAs } from "../../src/audit/context";
import { auditInserts } from "../../src/audit/record";
import { newId } from "../../src/lib/ids";

const N = 5_000;

async function sizeOf(): Promise<number> {
	const result = await env.DB.prepare("SELECT 1").run();
	return result.meta.size_after;
}

async function bytesPerRecord(changes: () => Record<string, unknown[]>, action: string): Promise<number> {
	const before = await sizeOf();
	const context = {
		actor: { type: "api_key" as const, keyId: newId("key"), keyPrefix: "sk_api_Ab12Cd…" },
		requestId: newId("req"),
	};
	for (let i = 0; i < N; i += 500) {
		const statements = await actingAs(context, async () =>
			auditInserts(
				env.DB,
				{ environment: "live" },
				Array.from({ length: 500 }, () => ({ action, resourceId: newId("acct"), changes: changes() })),
			),
		);
		await env.DB.batch(statements);
	}
	return ((await sizeOf()) - before) / N;
}

describe("the size of an audit record", () => {
	it("is a few hundred bytes with its indexes", async () => {
		const update = await bytesPerRecord(
			() => ({ email: ["billing@acme.test", "finance@acme.test"], net_terms_days: [30, 14] }),
			"account.updated",
		);
		const create = await bytesPerRecord(
			() => ({
				account_id: [newId("acct")],
				rate_plan_id: [newId("plan")],
				agent_instance_ids: [["support-bot-1", "support-bot-2"]],
				started_at: ["2026-11-21T10:00:00.000Z"],
				shards: [1],
			}),
			"subscription.created",
		);
		console.log(JSON.stringify({ at: "audit-record-size", records: N, update, create }));
		expect(update).toBeLessThan(600);
		expect(create).toBeLessThan(800);
	});
});
