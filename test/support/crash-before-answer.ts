import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { idempotencyFaults } from "../../src/http/idempotency-faults";
import type { ApiResponse } from "../helpers";

/**
 * Sends a request with an Idempotency-Key whose Worker "dies" after the route's write, before its answer is stored
 * (the instant a kill -9 mid-request leaves behind), then ages the key's record past the 60 seconds after which a
 * claim that stored nothing is taken over — the repeat of issue 43 came 62 s later — and sends the repeat.
 * Returns the dead request's response (a 500) and the repeat's.
 */
export async function crashBeforeAnswer(
	path: string,
	send: () => Promise<ApiResponse>,
): Promise<{ dead: ApiResponse; repeat: ApiResponse }> {
	const quiet = console.error;
	idempotencyFaults.beforeAnswerStored = (at) => {
		if (at === path) throw new Error("simulated crash: the Worker died before storing the answer");
	};
	console.error = () => {};
	let dead: ApiResponse;
	try {
		dead = await send();
	} finally {
		idempotencyFaults.beforeAnswerStored = undefined;
		console.error = quiet;
	}
	expect(dead.status, JSON.stringify(dead.body)).toBe(500);
	await env.DB.prepare("UPDATE idempotency_records SET created_at = ?1 WHERE path = ?2")
		.bind(new Date(Date.now() - 62_000).toISOString(), path)
		.run();
	return { dead, repeat: await send() };
}

/** The key's record as stored. */
export async function idempotencyRecord(path: string, key: string) {
	return env.DB.prepare(
		"SELECT state, status_code, resources FROM idempotency_records WHERE path = ?1 AND key = ?2",
	)
		.bind(path, key)
		.first<{ state: string; status_code: number | null; resources: string | null }>();
}
