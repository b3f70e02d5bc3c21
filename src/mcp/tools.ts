/**
 * The MCP tools, one row per REST operation: a tool is not a second API, it is its route called by another
 * name. Its input schema is the zod schema that route validates with, and the key's permission on the route
 * decides whether the tool is listed. A row is added here when its route exists (see docs/mcp.md).
 */
import { z } from "@hono/zod-openapi";
import { EntitlementQuery } from "../alerts/routes";
import type { Principal } from "../http/auth";
import { mayCallRoute } from "../http/permissions";
import { ListInvoicesQuery } from "../invoicing/schemas";
import { ActionInput, OutcomeInput } from "../metering/events";
import { UsageQuery } from "../metering/usage-routes";
import { SimulatePricing } from "../pricing/routes";
import { MarginsQuery } from "../reports/routes";
import { CreateReservation, ReservationParams } from "../reservations/routes";

export interface ToolRoute {
	name: string;
	title: string;
	description: string;
	/**
	 * GET arguments travel as the query string, POST arguments as the JSON body; an argument named in the path
	 * (`{reservation_id}`) fills it.
	 */
	method: "GET" | "POST";
	path: string;
	input: z.ZodType;
	/** Changes nothing (told to clients as readOnlyHint, so they may run it without asking). */
	readOnly: boolean;
}

export const toolRoutes: readonly ToolRoute[] = [
	{
		name: "check_entitlement",
		title: "Check entitlement",
		description:
			"Whether the agent instance may go on: false when a blocking budget alert of its subscription has fired. " +
			"Ask before an expensive step.",
		method: "GET",
		path: "/v1/entitlements",
		readOnly: true,
		input: EntitlementQuery,
	},
	{
		name: "reserve_budget",
		title: "Reserve budget",
		description:
			"Hold the estimated cost of a step before running it: granted only when it fits every blocking budget of " +
			"the instance's subscription (budget_exceeded otherwise). Send the step's event with " +
			"metadata.reservation_id = the id to settle it, or release it if the step fails; it expires after ttl_seconds.",
		method: "POST",
		path: "/v1/reservations",
		readOnly: false,
		input: CreateReservation,
	},
	{
		name: "release_reservation",
		title: "Release a reservation",
		description: "Give back a held reservation at once (when the step it was for failed or was skipped).",
		method: "POST",
		path: "/v1/reservations/{reservation_id}/release",
		readOnly: false,
		input: ReservationParams.strict(),
	},
	{
		name: "record_action",
		title: "Record an action",
		description:
			"Record an action the agent took (an LLM call, a tool call, an API call…), billed by its rate plan. " +
			"metadata.cost, model and token counts give its cost; an idempotency_key makes a retry count once.",
		method: "POST",
		path: "/v1/actions",
		readOnly: false,
		input: ActionInput,
	},
	{
		name: "record_outcome",
		title: "Record an outcome",
		description:
			"Record an outcome the agent achieved (a resolved ticket, a qualified lead…) with its value. " +
			"An idempotency_key makes a retry count once.",
		method: "POST",
		path: "/v1/outcomes",
		readOnly: false,
		input: OutcomeInput,
	},
	{
		name: "get_usage",
		title: "Get usage",
		description:
			"Usage so far in a billing period (default: the current month) for an agent instance or a subscription, " +
			"per metric and per day.",
		method: "GET",
		path: "/v1/usage",
		readOnly: true,
		input: UsageQuery,
	},
	{
		name: "simulate_price",
		title: "Simulate a price",
		description:
			"What a rate plan (rate_plan_id), or a subscription with its negotiated prices (subscription_id), would " +
			"charge for the given quantities per metric, line by line, without billing anything.",
		method: "POST",
		path: "/v1/pricing/simulate",
		readOnly: true,
		input: SimulatePricing,
	},
	{
		name: "list_invoices",
		title: "List invoices",
		description:
			"Invoices, newest first, filtered by account, payer account, status, subscription or billing period.",
		method: "GET",
		path: "/v1/invoices",
		readOnly: true,
		input: ListInvoicesQuery,
	},
	{
		name: "get_margins",
		title: "Get margins",
		description:
			"Revenue, costs and margin of a billing period (YYYY-MM): live for the current month (what its invoices " +
			"would be now, costs so far), as invoiced for a past one; group_by agent, customer, model or product.",
		method: "GET",
		path: "/v1/reports/margins",
		readOnly: true,
		input: MarginsQuery,
	},
];

const byName = new Map(toolRoutes.map((tool) => [tool.name, tool]));

export function findTool(name: string): ToolRoute | undefined {
	return byName.get(name);
}

/** A tool is offered exactly when the key may call its route. */
export function mayUseTool(principal: Principal, tool: ToolRoute): boolean {
	return mayCallRoute(principal, tool.method, tool.path);
}

export type ToolInputSchema = { type: "object"; [key: string]: unknown };

const inputSchemas = new Map<string, ToolInputSchema>();

/**
 * The schema with one `type` string per property, the form MCP clients and the Inspector read (several take `type`
 * as one string and drop or refuse an array of them). `null` is left out of what a property advertises (a tool
 * call omits what it does not set; the route still takes an explicit null); what is still several types, e.g.
 * `[string, number]`, becomes `anyOf: [{type: string}, {type: number}]`.
 */
function oneTypeEach(node: unknown): unknown {
	if (Array.isArray(node)) return node.map(oneTypeEach);
	if (node === null || typeof node !== "object") return node;
	const out: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(node)) out[key] = oneTypeEach(value);
	if (Array.isArray(out.anyOf)) {
		const branches = (out.anyOf as Record<string, unknown>[]).filter((branch) => branch.type !== "null");
		if (branches.length === 1 && branches.length < out.anyOf.length) {
			const { anyOf: _, ...rest } = out;
			return { ...rest, ...(branches[0] as Record<string, unknown>) };
		}
	}
	if (Array.isArray(out.type)) {
		const { type, ...rest } = out;
		const types = type as string[];
		const others = types.filter((each) => each !== "null");
		if (others.length === 1) return { ...rest, type: others[0] };
		const branches = types.map((each) => ({ type: each }));
		return "anyOf" in rest ? { allOf: [rest, { anyOf: branches }] } : { ...rest, anyOf: branches };
	}
	return out;
}

/** The JSON Schema of what the route accepts, as a client would send it (computed once per isolate). */
export function inputSchemaOf(tool: ToolRoute): ToolInputSchema {
	let schema = inputSchemas.get(tool.name);
	if (!schema) {
		const { $schema: _, ...json } = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" });
		schema = { ...(oneTypeEach(json) as Record<string, unknown>), type: "object" };
		inputSchemas.set(tool.name, schema);
	}
	return schema;
}
