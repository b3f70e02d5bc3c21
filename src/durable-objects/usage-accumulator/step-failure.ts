/**
 * A step that may fail and is repeated (the two steps of an adoption: parts/adoption.ts) answers its failure
 * instead of throwing it across the RPC boundary. A rejection that leaves an object is reported by the runtime
 * as an uncaught exception of that object, a stack trace in the logs for a failure its caller handles: the
 * subscription's creation logs one line and leaves the adoption to the cron. The client (handle.ts) turns the
 * answer back into the error, so callers see the same rejection as before.
 */

export interface StepFailure {
	failed: string;
}

/** In the object: the step's answer, or its failure as an answer. */
export async function answerOf<T>(step: () => Promise<T>): Promise<T | StepFailure> {
	try {
		return await step();
	} catch (error) {
		return { failed: error instanceof Error ? error.message : String(error) };
	}
}

/** In the client: the step's answer, or its failure thrown again, as the caller's own rejection. */
export async function resultOf<T extends object | number>(answer: Promise<T | StepFailure>): Promise<T> {
	const settled = await answer;
	if (typeof settled === "object" && settled !== null && "failed" in settled && !Array.isArray(settled)) {
		throw new Error(settled.failed);
	}
	return settled as T;
}
