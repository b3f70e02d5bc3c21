/** GET /v1/events (the explorer) and GET /v1/events/export (a day of the archive), docs/metering.md#where-events-live. */
import { createRoute, z } from "@hono/zod-openapi";
import { INSTANCE_KEY } from "../agents/instances";
import { scopeOf } from "../http/context";
import { errorResponses } from "../http/errors";
import { ADMIN, READ } from "../http/permissions";
import { apiRouter } from "../http/router";
import { instantRange, isRealDay } from "../lib/date-range";
import { validationError } from "../lib/errors";
import { EVENT_TYPE } from "../metering/events";
import { DateParam } from "../schemas/dates";
import { listEvents } from "./explorer";
import { archivedDayStream } from "./export";
import { EventSchema } from "./views";

// Instants outside years 0000–9999 clamp to these, so that bounds compare as text with stored timestamps.
const EARLIEST = "0000-01-01T00:00:00.000Z";
const LATEST = "9999-12-31T23:59:59.999Z";
const isoWithin = (date: Date) => {
	const year = date.getUTCFullYear();
	return year < 0 ? EARLIEST : year > 9999 ? LATEST : date.toISOString();
};

const EventListQuery = z.strictObject({
	subscription_id: z.string().min(1).max(200).optional(),
	agent_key: z.string().regex(INSTANCE_KEY, "must be 1–200 characters of A-Z a-z 0-9 . _ : -").optional(),
	kind: z.enum(["action", "outcome"]).optional(),
	type: z.string().regex(EVENT_TYPE, "must be 1–100 characters of A-Z a-z 0-9 . _ : -").optional(),
	start_date: DateParam.optional().openapi({ description: "Inclusive; default: no lower bound." }),
	end_date: DateParam.optional().openapi({
		description: "Inclusive (a bare date covers its whole UTC day).",
	}),
	limit: z
		.string()
		.regex(/^\d{1,4}$/, "must be an integer from 1 to 1000")
		.transform(Number)
		.refine((n) => n >= 1 && n <= 1000, "must be an integer from 1 to 1000")
		.optional()
		.openapi({
			type: "integer",
			minimum: 1,
			maximum: 1000,
			description: "Page size, 1–1000 (default 100).",
			example: 100,
		}),
	cursor: z.string().min(1).max(500).optional().openapi({ description: "next_cursor of the previous page." }),
});

const EventPage = z
	.object({
		events: z.array(EventSchema),
		next_cursor: z.string().nullable().openapi({ description: "null at the end of the list." }),
	})
	.openapi("EventPage");

export const eventRoutes = apiRouter();

eventRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/events",
		operationId: "listEvents",
		tags: ["Events"],
		summary: "Explore raw events, newest first, in real time",
		description:
			"Events of a subscription, or of an instance across every accumulator it passed through; one of " +
			"subscription_id or agent_key is required. Newest timestamp first; continue with next_cursor (each " +
			"event once, whichever store serves it). Recent pages come from the usage accumulators (at least the " +
			"last 35 days; less for one whose storage cap purged early). Older pages continue from the R2 archive: " +
			"one D1 query for the days with matching events, one R2 list per day and accumulator, and the archive " +
			"objects (up to 5,000 events each) whose time range reaches the page, newest first. Such a page makes " +
			"at most 12 R2 requests once it holds an event, so it may hold fewer than limit events and still have " +
			"a next_cursor. An archive that cannot be read answers 500 internal_error; retry with the same cursor.",
		request: { query: EventListQuery },
		responses: {
			200: { description: "A page of events", content: { "application/json": { schema: EventPage } } },
			...errorResponses(400, 404),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		if (query.subscription_id === undefined && query.agent_key === undefined) {
			throw validationError("subscription_id", "Give subscription_id or agent_key.");
		}
		const from =
			query.start_date === undefined
				? EARLIEST
				: isoWithin(instantRange(query.start_date, query.start_date).start);
		const to =
			query.end_date === undefined ? LATEST : isoWithin(instantRange(query.end_date, query.end_date).end);
		if (query.start_date !== undefined && query.end_date !== undefined && from >= to) {
			throw validationError("start_date", "start_date must not be after end_date.");
		}
		const page = await listEvents({
			env: c.env,
			...scopeOf(c),
			query: {
				subscriptionId: query.subscription_id,
				agentKey: query.agent_key,
				kind: query.kind,
				type: query.type,
				from,
				to,
				limit: query.limit ?? 100,
				cursor: query.cursor,
			},
		});
		return c.json(page, 200);
	},
);

const ExportQuery = z.strictObject({
	date: z
		.string()
		.refine(isRealDay, "must be a date YYYY-MM-DD")
		.openapi({ description: "The UTC day of the events' timestamps.", example: "2026-11-21" }),
});

eventRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "get",
		path: "/events/export",
		operationId: "exportEvents",
		tags: ["Events"],
		summary: "Export a day of archived events as NDJSON (admin)",
		description:
			"Every archived event whose timestamp falls on that UTC day, one JSON object per line (the shape of " +
			"GET /v1/events), streamed. Events are archived a few seconds after they are counted.",
		request: { query: ExportQuery },
		responses: {
			200: {
				description: "The day's events, one per line",
				content: { "application/x-ndjson": { schema: z.string() } },
			},
			...errorResponses(400),
		},
	}),
	(c) => {
		const { date } = c.req.valid("query");
		const stream = archivedDayStream(c.env, c.get("scope"), date);
		return c.body(stream, 200, { "Content-Type": "application/x-ndjson" }) as never;
	},
);
