/** An agent and an agent instance as the API shows them. */
import { z } from "@hono/zod-openapi";

export const Agent = z
	.object({
		id: z.string().openapi({ example: "agt_01jd0000000000000000000000" }),
		name: z.string(),
		type: z.enum(["langgraph", "crewai", "n8n", "custom"]),
		description: z.string().nullable(),
		created_at: z.string(),
	})
	.openapi("Agent");

export const Instance = z
	.object({
		key: z.string(),
		agent_id: z.string().nullable(),
		name: z.string().nullable(),
		created_at: z.string(),
	})
	.openapi("AgentInstance");
