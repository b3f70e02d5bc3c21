import { describe, expect, it } from "vitest";
import { get, post } from "../helpers";

describe("smoke", () => {
	it("healthz", async () => {
		const r = await get("/healthz", { key: null });
		expect(r.status).toBe(200);
		expect(r.body).toEqual({ status: "ok" });
	});
	it("creates and lists an agent", async () => {
		const created = await post("/v1/agents", { name: "A", type: "crewai" });
		expect(created.status).toBe(201);
		const list = await get("/v1/agents");
		expect(list.body.agents[0].id).toBe(created.body.id);
	});
});
