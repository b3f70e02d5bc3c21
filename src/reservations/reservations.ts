/**
 * Budget reservations (docs/reservations.md): hold an amount of an instance's subscription budget before spending
 * it. The hold lives in the subscription's head accumulator, where the budgets are; this file finds it and turns
 * its answers into the API's. The reservation id names its subscription (usage-accumulator/reservations.ts), so
 * reading or releasing one needs no index: one D1 read of the subscription's shard count finds its head. That
 * keeps creating a reservation to the route cache and one call to the head, with no D1 write on the way.
 */
import { eq } from "drizzle-orm";
import type { InScope } from "../db/rows";
import { subscriptions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { headAccumulator, usageAccumulator } from "../durable-objects/usage-accumulator/handle";
import {
	type ReservationView,
	subscriptionOfReservation,
} from "../durable-objects/usage-accumulator/parts/reservations";
import { existingRoute } from "../durable-objects/usage-accumulator/placement";
import type { RequestKey } from "../durable-objects/usage-accumulator/storage/reservation-requests";
import type { Env } from "../env";
import { missingRate } from "../exchange-rates/convert";
import { conflict, DomainError, notFound } from "../lib/errors";

export type Reservation = ReservationView;

export interface ReservationInput {
	agent_key: string;
	amount: number;
	ttl_seconds?: number;
	description?: string | null;
}

export const DEFAULT_TTL_SECONDS = 300;

/** What a write answers: the reservation, and whether an earlier request with its Idempotency-Key wrote it. */
export interface ReservationWrite {
	reservation: Reservation;
	replayed: boolean;
}

function keyReused(): DomainError {
	return new DomainError(
		"idempotency_key_reused",
		"This Idempotency-Key was used with a different request body.",
	);
}

/** `request`: the Idempotency-Key the hold carries, so that a repeat after a crash finds it (never holds twice). */
export async function createReservation({
	env,
	scope,
	input,
	request,
}: {
	env: Env;
	scope: Scope;
	input: ReservationInput;
	request?: RequestKey;
}): Promise<ReservationWrite> {
	const route = await existingRoute(env.DB, scope, input.agent_key);
	if (route === null) throw notFound("agent instance", input.agent_key);
	if (route.subscriptionId === null) {
		throw conflict(
			`Agent instance '${input.agent_key}' has no active subscription, so it has no budget to hold.`,
		);
	}
	const head = headAccumulator(scope.environment, route.subscriptionId, route.shards);
	const answer = await usageAccumulator(env, head).reserve(route.accountId, {
		agentKey: input.agent_key,
		amount: String(input.amount),
		ttlSeconds: input.ttl_seconds ?? DEFAULT_TTL_SECONDS,
		description: input.description ?? null,
		request,
	});
	if ("reused" in answer) throw keyReused();
	if ("missingRate" in answer) throw missingRate([answer.missingRate]);
	if ("exceeded" in answer) {
		const names = answer.exceeded.map((d) => d.alert_id).join(", ");
		throw new DomainError(
			"budget_exceeded",
			`Reserving ${input.amount} would exceed the budget of alert ${names}: ` +
				"spent so far plus active holds plus this amount is over its threshold.",
			{ details: answer.exceeded },
		);
	}
	return { reservation: answer.reservation, replayed: answer.replayed === true };
}

/** The head that holds a reservation, or not_found (an id of no subscription of this environment). */
async function headOf({ db, scope }: InScope, id: string): Promise<string> {
	const subscriptionId = subscriptionOfReservation(id);
	const [row] =
		subscriptionId === null
			? []
			: await db
					.select({ shards: subscriptions.shards })
					.from(subscriptions)
					.where(inScope(scope, subscriptions, eq(subscriptions.id, subscriptionId)));
	if (!row || subscriptionId === null) throw notFound("reservation", id);
	return headAccumulator(scope.environment, subscriptionId, row.shards);
}

export async function getReservation(context: InScope & { env: Env; id: string }): Promise<Reservation> {
	const head = await headOf(context, context.id);
	const reservation = await usageAccumulator(context.env, head).reservation(context.id);
	if (reservation === null) throw notFound("reservation", context.id);
	return reservation;
}

export async function releaseReservation(
	context: InScope & { env: Env; id: string; request?: RequestKey },
): Promise<ReservationWrite> {
	const head = await headOf(context, context.id);
	const answer = await usageAccumulator(context.env, head).releaseReservation(context.id, context.request);
	if (answer === null) throw notFound("reservation", context.id);
	if ("reused" in answer) throw keyReused();
	if ("notHeld" in answer) {
		throw conflict(
			`Reservation '${context.id}' is ${answer.notHeld.status}, not held: there is nothing to release.`,
		);
	}
	return { reservation: answer.released, replayed: answer.replayed === true };
}
