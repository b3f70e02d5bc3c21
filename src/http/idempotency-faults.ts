/**
 * Fault injection, for tests only: a test makes the Idempotency-Key middleware die at the instant between a
 * route's write and the storing of its answer — where a Worker killed mid-request leaves the key — to show that
 * a repeat answers what was written and writes nothing twice. Production code never sets a hook.
 */
export interface IdempotencyFaults {
	/** After the route answered (its write committed), before the answer is stored under the key. */
	beforeAnswerStored?: (path: string) => void;
}

export const idempotencyFaults: IdempotencyFaults = {};
