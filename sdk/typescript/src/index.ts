export { MeteringClient } from "./client.js";
export { type GuardOptions, withReservation } from "./integrations/guard.js";
export {
	BudgetExceededError,
	type BudgetShortfall,
	MeteringApiError,
	type Reservation,
	type ReserveInput,
} from "./reservations.js";
export { parseRetryAfter } from "./transport.js";
export type {
	ActionInput,
	ClientStats,
	DeliveryFailure,
	DeliveryReport,
	EventKind,
	FailureReason,
	Metadata,
	MeteringClientOptions,
	MeteringEvent,
	OutcomeInput,
} from "./types.js";
