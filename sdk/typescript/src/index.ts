export { MeteringClient } from "./client.js";
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
