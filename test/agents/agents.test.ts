import { describe, expect, it } from "vitest";
import { createAgent, createKey, expectError, get, patch, post } from "../helpers";

describe("agents (§5)", () => {
	it("creates an agent with the contract's shape", async () => {
		const response = await post("/v1/agents", {
			name: "Support bot",
			type: "crewai",
			description: "Tier-1 support",
		});
		expect(response.status).toBe(201);
		expect(response.body).toEqual({
			id: expect.stringMatching(/^agt_[0-9a-z]{26}$/),
			name: "Support bot",
			type: "crewai",
			description: "Tier-1 support",
			created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
		});
		const fetched = await get(`/v1/agents/${response.body.id}`);
		expect(fetched.status).toBe(200);
		expect(fetched.body).toEqual(response.body);
	});

	it("defaults description to null", async () => {
		expect((await createAgent()).name).toBe("Lead qualifier");
		const response = await post("/v1/agents", { name: "Bare", type: "custom" });
		expect(response.body.description).toBeNull();
	});

	it.each([
		[{ type: "custom" }, "name"],
		[{ name: "   ", type: "custom" }, "name"],
		[{ name: "x".repeat(201), type: "custom" }, "name"],
		[{ name: "A" }, "type"],
		[{ name: "A", type: "autogen" }, "type"],
		[{ name: "A", type: "custom", description: "d".repeat(2001) }, "description"],
		[{ name: "A", type: "custom", created_at: "2020-01-01T00:00:00Z" }, "created_at"],
	])("rejects %j at %s", async (body, path) => {
		const error = expectError(await post("/v1/agents", body), 400, "validation_error");
		expect(error.details?.map((d) => d.path)).toContain(path);
	});

	it("lists newest first with limit, offset and total", async () => {
		const created = [];
		for (const name of ["p1", "p2", "p3"]) created.push(await createAgent(undefined, { name }));
		const page = await get("/v1/agents?limit=2&offset=0");
		expect(page.status).toBe(200);
		expect(page.body.limit).toBe(2);
		expect(page.body.offset).toBe(0);
		expect(page.body.agents.map((a: { id: string }) => a.id)).toEqual([created[2]?.id, created[1]?.id]);
		const next = await get("/v1/agents?limit=2&offset=2");
		expect(next.body.agents[0].id).toBe(created[0]?.id);
		expect(next.body.total).toBe(page.body.total);
		expect((await get("/v1/agents")).body.limit).toBe(20);
	});

	it("renames an agent and changes its description", async () => {
		const agent = await createAgent();
		const response = await patch(`/v1/agents/${agent.id}`, { name: "Renamed", description: null });
		expect(response.status).toBe(200);
		expect(response.body).toMatchObject({
			id: agent.id,
			name: "Renamed",
			description: null,
			type: "langgraph",
		});
		expect((await get(`/v1/agents/${agent.id}`)).body.name).toBe("Renamed");
		expectError(await patch(`/v1/agents/${agent.id}`, { type: "n8n" }), 400, "validation_error");
		expectError(await patch("/v1/agents/agt_unknown", { name: "X" }), 404, "not_found");
	});

	it("answers 404 for unknown agents and for agents of the other environment", async () => {
		expectError(await get("/v1/agents/agt_unknown"), 404, "not_found");
		const testKey = await createKey("read-write", "test");
		const testAgent = await createAgent(testKey);
		expectError(await get(`/v1/agents/${testAgent.id}`), 404, "not_found");
		expect((await get(`/v1/agents/${testAgent.id}`, { key: testKey })).status).toBe(200);
		const liveIds = (await get("/v1/agents?limit=100")).body.agents.map((a: { id: string }) => a.id);
		expect(liveIds).not.toContain(testAgent.id);
	});
});

describe("agent instances (§5)", () => {
	it("registers an instance (201), lists it, and re-registers it idempotently (200)", async () => {
		const agent = await createAgent();
		const created = await post(`/v1/agents/${agent.id}/instances`, { key: "prod-eu-1", name: "EU" });
		expect(created.status).toBe(201);
		expect(created.body).toEqual({
			key: "prod-eu-1",
			agent_id: agent.id,
			name: "EU",
			created_at: expect.any(String),
		});
		const again = await post(`/v1/agents/${agent.id}/instances`, { key: "prod-eu-1" });
		expect(again.status).toBe(200);
		expect(again.body.name).toBe("EU");
		const list = await get(`/v1/agents/${agent.id}/instances`);
		expect(list.body).toMatchObject({ total: 1, limit: 20, offset: 0 });
		expect(list.body.instances[0].key).toBe("prod-eu-1");
	});

	it("refuses a key assigned to another agent with 409", async () => {
		const [a, b] = [await createAgent(), await createAgent()];
		await post(`/v1/agents/${a.id}/instances`, { key: "shared-key" });
		expectError(await post(`/v1/agents/${b.id}/instances`, { key: "shared-key" }), 409, "conflict");
	});

	it("validates the key and the agent", async () => {
		const agent = await createAgent();
		const error = expectError(
			await post(`/v1/agents/${agent.id}/instances`, { key: "has space" }),
			400,
			"validation_error",
		);
		expect(error.details?.[0]?.path).toBe("key");
		expectError(
			await post(`/v1/agents/${agent.id}/instances`, { key: "k".repeat(201) }),
			400,
			"validation_error",
		);
		expectError(await post("/v1/agents/agt_unknown/instances", { key: "ok" }), 404, "not_found");
		expectError(await get("/v1/agents/agt_unknown/instances"), 404, "not_found");
	});
});
