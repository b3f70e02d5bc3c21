import { z } from "@hono/zod-openapi";
import type { EventView } from "../durable-objects/usage-accumulator/parts/archive";

export function newestFirstView(a: EventView, b: EventView): number {
	if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? 1 : -1;
	return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export const EventSchema = z
	.object({
		id: z.string().openapi({ example: "act_01jd0000000000000000000000" }),
		kind: z.enum(["action", "outcome"]),
		agent_key: z.string(),
		type: z.string().openapi({ description: "The action_type or outcome_type." }),
		value: z.number().nullable().openapi({ description: "Outcomes: the value; null for actions." }),
		metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
		timestamp: z.string(),
		received_at: z.string(),
		subscription_id: z.string().nullable(),
		billable: z.boolean().openapi({
			description: "False when the event lies outside every subscription: recorded, never billed.",
		}),
	})
	.openapi("Event");
