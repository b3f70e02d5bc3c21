import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { PageQuery, pageOf, pageSchema } from "../schemas/pages";
import { createAgent, getAgent, listAgents, updateAgent } from "./agents";
import { INSTANCE_KEY, listInstances, registerInstance } from "./instances";
import { Agent, Instance } from "./schemas";

const notBlank = (max: number) =>
	z
		.string()
		.min(1)
		.max(max)
		.refine((s) => s.trim().length > 0, "Must not be blank.");

const CreateAgent = z
	.strictObject({
		name: notBlank(200),
		type: z.enum(["langgraph", "crewai", "n8n", "custom"]),
		description: z.string().max(2000).nullable().optional(),
	})
	.openapi("CreateAgent");

const UpdateAgent = z
	.strictObject({ name: notBlank(200).optional(), description: z.string().max(2000).nullable().optional() })
	.openapi("UpdateAgent");

const RegisterInstance = z
	.strictObject({
		key: z.string().regex(INSTANCE_KEY, "1–200 characters of A-Z a-z 0-9 . _ : -"),
		name: z.string().min(1).max(200).optional(),
	})
	.openapi("RegisterInstance");

const AgentParams = z.object({ agent_id: z.string() });

export const agentRoutes = apiRouter();

agentRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/agents",
		operationId: "listAgents",
		tags: ["Agents"],
		summary: "List agents",
		request: { query: PageQuery },
		responses: {
			200: { description: "Agents", ...json(pageSchema("agents", Agent)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const { items, total } = await listAgents({ ...scopeOf(c), ...query });
		return c.json(pageOf("agents", items, total, query), 200);
	},
);

agentRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/agents",
		operationId: "createAgent",
		tags: ["Agents"],
		summary: "Create an agent",
		request: { body: { required: true, ...json(CreateAgent) } },
		responses: { 201: { description: "The agent", ...json(Agent) }, ...errorResponses(...bodyErrors) },
	}),
	async (c) => c.json(await createAgent({ ...scopeOf(c), input: c.req.valid("json") }), 201),
);

agentRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/agents/{agent_id}",
		operationId: "getAgent",
		tags: ["Agents"],
		summary: "Get an agent",
		request: { params: AgentParams },
		responses: { 200: { description: "The agent", ...json(Agent) }, ...errorResponses(404) },
	}),
	async (c) => c.json(await getAgent({ ...scopeOf(c), id: c.req.valid("param").agent_id }), 200),
);

agentRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "patch",
		path: "/agents/{agent_id}",
		operationId: "updateAgent",
		tags: ["Agents"],
		summary: "Rename an agent or change its description",
		request: { params: AgentParams, body: { required: true, ...json(UpdateAgent) } },
		responses: { 200: { description: "The agent", ...json(Agent) }, ...errorResponses(...bodyErrors, 404) },
	}),
	async (c) => {
		const agent = await updateAgent({
			...scopeOf(c),
			id: c.req.valid("param").agent_id,
			input: c.req.valid("json"),
		});
		return c.json(agent, 200);
	},
);

agentRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/agents/{agent_id}/instances",
		operationId: "listAgentInstances",
		tags: ["Agents"],
		summary: "List an agent's instances",
		request: { params: AgentParams, query: PageQuery },
		responses: {
			200: { description: "Instances", ...json(pageSchema("instances", Instance)) },
			...errorResponses(400, 404),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const { items, total } = await listInstances({
			...scopeOf(c),
			agentId: c.req.valid("param").agent_id,
			...query,
		});
		return c.json(pageOf("instances", items, total, query), 200);
	},
);

agentRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/agents/{agent_id}/instances",
		operationId: "registerAgentInstance",
		tags: ["Agents"],
		summary: "Register an instance key under an agent",
		request: { params: AgentParams, body: { required: true, ...json(RegisterInstance) } },
		responses: {
			200: { description: "An unassigned key, now assigned", ...json(Instance) },
			201: { description: "A new instance", ...json(Instance) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const { instance, created } = await registerInstance({
			...scopeOf(c),
			agentId: c.req.valid("param").agent_id,
			input: c.req.valid("json"),
		});
		return c.json(instance, created ? 201 : 200);
	},
);
