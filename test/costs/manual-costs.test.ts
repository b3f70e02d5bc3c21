import { describe, expect, it } from "vitest";
import { createAccount, createAgent, createKey, expectError, get, post } from "../helpers";

describe("manual cost records (§11)", () => {
	it("records a cost and lists it with total and count", async () => {
		const agent = await createAgent();
		const account = await createAccount();
		const created = await post("/v1/costs", {
			agent_id: agent.id,
			cost_type: "gpu_hours",
			amount: 12.34,
			period: "2026-10",
			customer_id: account.id,
		});
		expect(created.status).toBe(201);
		expect(created.body).toEqual({
			id: expect.stringMatching(/^cost_/),
			agent_id: agent.id,
			customer_id: account.id,
			cost_type: "gpu_hours",
			model: null,
			amount: 12.34,
			currency: "USD",
			period: "2026-10",
			source: "manual",
		});
		await post("/v1/costs", { agent_id: agent.id, cost_type: "hosting", amount: 0.66, period: "2026-10" });

		const listed = await get(`/v1/costs?agent_id=${agent.id}`);
		expect(listed.status).toBe(200);
		// 12.34 + 0.66 = 13.00
		expect(listed.body).toMatchObject({ total: 13, count: 2, currency: "USD", limit: 20, offset: 0 });
		expect(listed.body.costs).toHaveLength(2);

		const byCustomer = await get(`/v1/costs?customer_id=${account.id}`);
		expect(byCustomer.body).toMatchObject({ total: 12.34, count: 1 });
	});

	it("pages records while total and count cover every match", async () => {
		const agent = await createAgent();
		for (const amount of [1.1, 2.2, 3.3]) {
			await post("/v1/costs", { agent_id: agent.id, cost_type: "api", amount, period: "2026-09" });
		}
		const page = await get(`/v1/costs?agent_id=${agent.id}&limit=1&offset=1`);
		// 1.1 + 2.2 + 3.3 = 6.6 exactly (no binary float artefact such as 6.6000000000000005)
		expect(page.body).toMatchObject({ total: 6.6, count: 3, limit: 1, offset: 1 });
		expect(page.body.costs).toHaveLength(1);
	});

	it("selects records whose period overlaps the date range, in the asked currency", async () => {
		const agent = await createAgent();
		await post("/v1/costs", { agent_id: agent.id, cost_type: "api", amount: 5, period: "2026-08" });
		await post("/v1/costs", { agent_id: agent.id, cost_type: "api", amount: 7, period: "2026-09" });
		await post("/v1/costs", {
			agent_id: agent.id,
			cost_type: "api",
			amount: 500,
			period: "2026-09",
			currency: "JPY",
		});
		const september = await get(`/v1/costs?agent_id=${agent.id}&start_date=2026-09-30&end_date=2026-10-15`);
		expect(september.body).toMatchObject({ total: 7, count: 1 });
		const both = await get(
			`/v1/costs?agent_id=${agent.id}&start_date=2026-08-31T23:00:00Z&end_date=2026-09-01`,
		);
		expect(both.body).toMatchObject({ total: 12, count: 2 });
		const yen = await get(`/v1/costs?agent_id=${agent.id}&currency=JPY`);
		expect(yen.body).toMatchObject({ total: 500, count: 1, currency: "JPY" });
	});

	it.each([
		[{ cost_type: "api", amount: 1, period: "2026-09" }, "agent_id"],
		[{ agent_id: "x", cost_type: "api", amount: -1, period: "2026-09" }, "amount"],
		[{ agent_id: "x", cost_type: "api", amount: 1.234, period: "2026-09" }, "amount"],
		[{ agent_id: "x", cost_type: "api", amount: 1, period: "2026-13" }, "period"],
		[{ agent_id: "x", cost_type: "api", amount: 1, period: "2026-09", currency: "usd" }, "currency"],
		[{ agent_id: "x", cost_type: "bad type", amount: 1, period: "2026-09" }, "cost_type"],
		[{ agent_id: "x", cost_type: "api", amount: 1, period: "2026-09", source: "events" }, "source"],
	])("rejects %j at %s", async (body, path) => {
		const error = expectError(await post("/v1/costs", body), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(path);
	});

	it("answers 404 for an unknown agent or customer, and stores nothing", async () => {
		const agent = await createAgent();
		expectError(
			await post("/v1/costs", { agent_id: "agt_none", cost_type: "api", amount: 1, period: "2026-09" }),
			404,
			"not_found",
		);
		const unknownCustomer = {
			agent_id: agent.id,
			cost_type: "api",
			amount: 1,
			period: "2026-09",
			customer_id: "acct_none",
		};
		expectError(await post("/v1/costs", unknownCustomer), 404, "not_found");
		expect((await get(`/v1/costs?agent_id=${agent.id}`)).body.count).toBe(0);
	});

	it.each([
		["start_date=2026-10-02&end_date=2026-10-01", "start_date"],
		["start_date=yesterday", "start_date"],
		["end_date=2026-02-30", "end_date"],
		["currency=EURO", "currency"],
		["limit=101", "limit"],
	])("rejects the query %s", async (query, path) => {
		const error = expectError(await get(`/v1/costs?${query}`), 400, "validation_error");
		expect(error.details?.[0]?.path).toBe(path);
	});

	it("keeps environments apart and lets read-only keys read but not write", async () => {
		const testKey = await createKey("read-write", "test");
		const testAgent = await createAgent(testKey);
		await post(
			"/v1/costs",
			{ agent_id: testAgent.id, cost_type: "api", amount: 3, period: "2026-09" },
			{ key: testKey },
		);
		expect((await get(`/v1/costs?agent_id=${testAgent.id}`)).body.count).toBe(0);
		expect((await get(`/v1/costs?agent_id=${testAgent.id}`, { key: testKey })).body.count).toBe(1);
		const readOnly = await createKey("read-only");
		expect((await get("/v1/costs", { key: readOnly })).status).toBe(200);
		expectError(await post("/v1/costs", {}, { key: readOnly }), 403, "forbidden");
	});
});
