/**
 * The budget guard: reserve the estimated cost of a call, run it, send its event with `metadata.reservation_id`
 * (which settles the hold), and release the hold when the call fails. A call that does not fit the budget is not
 * run: `reserve` rejects with BudgetExceededError.
 *
 *   const answer = await withReservation({ client, agentKey, estimate: 0.02 }, async (reservation) => {
 *     const result = await callTheModel();
 *     await client.action({ agentKey, type: "llm_call", metadata: { reservation_id: reservation.id } });
 *     return result;
 *   });
 */
import type { MeteringClient } from "../client.js";
import type { Reservation } from "../reservations.js";

/** The `budget` option of the AI SDK and LangChain integrations: each model call reserves its estimate first. */
export interface BudgetGuard {
	/** The call's estimated cost (a number, or computed from the call's parameters). */
	estimate: number | ((params: unknown) => number);
	ttlSeconds?: number;
}

export interface GuardOptions {
	client: MeteringClient;
	agentKey: string | (() => string);
	/** The call's estimated cost, in the currency of the subscription's plan. */
	estimate: number;
	/** How long the hold lasts if the call neither settles nor releases it; default the service's (300 s). */
	ttlSeconds?: number;
	description?: string;
}

/** Reserves, runs, and releases when `run` throws (the error is rethrown). `run` sends the settling event. */
export async function withReservation<T>(
	options: GuardOptions,
	run: (reservation: Reservation) => Promise<T>,
): Promise<T> {
	const agentKey = typeof options.agentKey === "function" ? options.agentKey() : options.agentKey;
	const reservation = await options.client.reserve({
		agentKey,
		amount: options.estimate,
		ttlSeconds: options.ttlSeconds,
		description: options.description,
	});
	try {
		return await run(reservation);
	} catch (error) {
		await releaseQuietly(options.client, reservation.id);
		throw error;
	}
}

/** A failed release only shortens nothing: the hold expires at its time. */
export async function releaseQuietly(client: MeteringClient, reservationId: string): Promise<void> {
	try {
		await client.release(reservationId);
	} catch (error) {
		console.error("agent-metering: could not release a reservation", error);
	}
}
