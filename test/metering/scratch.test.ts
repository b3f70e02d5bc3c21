import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { database } from "../../src/db/client";
import { ensureInstancesStatement } from "../../src/agents/instances";
import { outboxInsert } from "../../src/webhooks/outbox";

it("batch with raw returning and changes guard", async () => {
	const db = database(env.DB);
	const ens = ensureInstancesStatement(db, { environment: "live" }, ["k1", "k2"]) as any;
	const q1 = ens.getQuery();
	const q2 = outboxInsert(db, { environment: "live" }, "subscription.created", { a: 1 }).toSQL();
	console.log(JSON.stringify(q1), JSON.stringify(q2));
	const r = await env.DB.batch([
		env.DB.prepare(q1.sql).bind(...q1.params),
		env.DB.prepare(q2.sql).bind(...q2.params),
		env.DB.prepare("INSERT INTO subscription_instances (environment, subscription_id, agent_key, added_at) SELECT 'live', 'sub_x', value, 'now' FROM json_each(?) RETURNING id, agent_key").bind(JSON.stringify(["a", "b"])),
	]);
	console.log(JSON.stringify(r));
	let err: unknown;
	try {
		await env.DB.batch([
			env.DB.prepare(`UPDATE subscription_instances SET removed_at = 'x' WHERE agent_key = 'zzz'`),
			env.DB.prepare(`INSERT INTO subscription_plans (subscription_id, effective_period, rate_plan_id) SELECT NULL, NULL, NULL WHERE changes() = 0`),
		]);
	} catch (e) {
		err = e;
	}
	console.log("ERR", String(err), String((err as any)?.cause));
	expect(err).toBeDefined();
	await env.DB.batch([
		env.DB.prepare(`UPDATE subscription_instances SET removed_at = 'x' WHERE agent_key = 'a'`),
		env.DB.prepare(`INSERT INTO subscription_plans (subscription_id, effective_period, rate_plan_id) SELECT NULL, NULL, NULL WHERE changes() = 0`),
	]);
	console.log(JSON.stringify(await env.DB.prepare("select * from webhook_events").all()));
});
