import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
	actions,
	currentPeriod,
	customer,
	generate,
	generateOne,
	invoicesOf,
	sendActions,
} from "../fixtures";

const plan = {
	base_fee: 5,
	charges: [
		{
			metric: "runs",
			source: { kind: "action", type: "run", aggregate: "count" },
			model: "per_unit",
			unit_price: 1,
		},
	],
};

async function outboxCount(): Promise<number> {
	const row = await env.DB.prepare(
		"SELECT count(*) AS n FROM webhook_events WHERE event = 'invoice.created'",
	).first<{
		n: number;
	}>();
	return row?.n ?? 0;
}

describe("scenario: generating twice", () => {
	it("bills nothing the second time: 200 with no invoices and no event", async () => {
		const { account, instances } = await customer(plan);
		await sendActions(actions(instances[0] as string, "run", 3));
		const first = await generateOne(currentPeriod(), account.id);
		// base fee 5.00 + 3 runs × 1.00 = 8.00
		expect(first.amount).toBe(8);
		const events = await outboxCount();

		const again = await generate(currentPeriod(), account.id);
		expect(again).toEqual({ status: 200, invoices: [] });
		const everyone = await generate(currentPeriod());
		expect(everyone).toEqual({ status: 200, invoices: [] });

		expect(await outboxCount()).toBe(events);
		expect(await invoicesOf(account.id)).toEqual([first]);
	});
});
