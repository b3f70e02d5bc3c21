import { createRoute, z } from "@hono/zod-openapi";
import { INSTANCE_KEY } from "../agents/instances";
import { claimDigest } from "../db/write-once";
import type { RequestKey } from "../durable-objects/usage-accumulator/storage/reservation-requests";
import type { AppContext } from "../http/context";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { SDK_READ, SDK_WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { decimalPlaces } from "../lib/money";
import { MAX_ABS_NUMBER, MAX_MONEY_DECIMALS } from "../lib/numbers";
import {
	createReservation,
	DEFAULT_TTL_SECONDS,
	getReservation,
	type ReservationWrite,
	releaseReservation,
} from "./reservations";

export const CreateReservation = z
	.strictObject({
		agent_key: z.string().regex(INSTANCE_KEY, "must be 1–200 characters of A-Z a-z 0-9 . _ : -"),
		amount: z
			.number()
			.positive("must be > 0")
			.max(MAX_ABS_NUMBER, "must be at most 1e15")
			.refine((n) => decimalPlaces(n) <= MAX_MONEY_DECIMALS, {
				message: `must have at most ${MAX_MONEY_DECIMALS} decimal places`,
			})
			.openapi({ example: 0.5, description: "In the currency of the subscription's plan, > 0." }),
		ttl_seconds: z
			.number()
			.int("must be a whole number of seconds")
			.min(10, "must be 10–3600")
			.max(3600, "must be 10–3600")
			.optional()
			.openapi({ example: DEFAULT_TTL_SECONDS, description: "How long the hold lasts; default 300." }),
		description: z.string().min(1).max(500).nullable().optional(),
	})
	.openapi("CreateReservation", { example: { agent_key: "support-bot-eu", amount: 0.5, ttl_seconds: 120 } });

export const Reservation = z
	.object({
		id: z.string().openapi({ example: "rsv_01jd000000000000000000000001jd0000000000000000000000" }),
		agent_key: z.string(),
		subscription_id: z.string(),
		amount: z.number(),
		currency: z.string().openapi({ example: "USD", description: "The currency of the subscription's plan." }),
		status: z.enum(["held", "settled", "released", "expired"]).openapi({
			description:
				"held until an event with metadata.reservation_id = this id is counted (settled), it is released " +
				"(released), or expires_at passes (expired).",
		}),
		description: z.string().nullable(),
		expires_at: z.string(),
		created_at: z.string(),
	})
	.openapi("Reservation");

export const ReservationParams = z.object({
	reservation_id: z.string().openapi({
		param: { name: "reservation_id", in: "path" },
		example: "rsv_01jd000000000000000000000001jd0000000000000000000000",
	}),
});

export const reservationRoutes = apiRouter();

/**
 * The request's Idempotency-Key as the hold keeps it: a repeat after a Worker died between the accumulator's
 * write and D1's record of the answer finds what was written and is answered with it (docs/reservations.md).
 */
function requestKeyOf(c: AppContext): RequestKey | undefined {
	const claim = c.get("idempotencyClaim");
	return claim === undefined ? undefined : { key: claimDigest(claim), hash: claim.requestHash };
}

/** The reservation a write answers, marked as a replay when an earlier request with its key wrote it. */
function written(c: AppContext, write: ReservationWrite): ReservationWrite["reservation"] {
	if (write.replayed) c.header("Idempotent-Replayed", "true");
	return write.reservation;
}

reservationRoutes.openapi(
	createRoute({
		access: SDK_WRITE,
		method: "post",
		path: "/reservations",
		operationId: "createReservation",
		tags: ["Reservations"],
		summary: "Hold part of a budget before spending it",
		description:
			"Fits when, for every block alert on the total amount of the instance's subscription, the period's amount " +
			"so far + active holds + amount ≤ its threshold; otherwise 409 budget_exceeded names the alerts and nothing " +
			"is held. Unknown instance → 404; no active subscription → 409 conflict. Concurrent reservations never " +
			"together exceed a budget.",
		request: { body: { required: true, ...json(CreateReservation) } },
		responses: {
			201: { description: "The hold", ...json(Reservation) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const write = await createReservation({
			env: c.env,
			scope: c.get("scope"),
			input: c.req.valid("json"),
			request: requestKeyOf(c),
		});
		return c.json(written(c, write), 201);
	},
);

reservationRoutes.openapi(
	createRoute({
		access: SDK_READ,
		method: "get",
		path: "/reservations/{reservation_id}",
		operationId: "getReservation",
		tags: ["Reservations"],
		summary: "Get a reservation",
		request: { params: ReservationParams },
		responses: { 200: { description: "The reservation", ...json(Reservation) }, ...errorResponses(404) },
	}),
	async (c) => {
		const id = c.req.valid("param").reservation_id;
		return c.json(await getReservation({ env: c.env, ...scopeOf(c), id }), 200);
	},
);

reservationRoutes.openapi(
	createRoute({
		access: SDK_WRITE,
		method: "post",
		path: "/reservations/{reservation_id}/release",
		operationId: "releaseReservation",
		tags: ["Reservations"],
		summary: "Release a hold",
		description: "Ends a held reservation at once; one that is settled, released or expired answers 409.",
		request: { params: ReservationParams },
		responses: {
			200: { description: "The released reservation", ...json(Reservation) },
			...errorResponses(404, 409),
		},
	}),
	async (c) => {
		const id = c.req.valid("param").reservation_id;
		const write = await releaseReservation({ env: c.env, ...scopeOf(c), id, request: requestKeyOf(c) });
		return c.json(written(c, write), 200);
	},
);
