/**
 * Every part the object routes calls to, in one module: object.ts imports it when its first instance is built, so
 * that a new isolate of the Worker (which exports the class at startup) parses none of it before it answers, and an
 * isolate that never runs an accumulator never does (docs/scaling.md#cold-start).
 */

export { readMetrics } from "../storage/metric-rows";
export { eventsRetainedAfter, newestRawEvents } from "../storage/raw-events";
export { AccumulatorStore } from "../storage/store";
export { absorbPage, setAsideFor } from "./adoption";
export { FlushSchedule } from "./alarm";
export { AlertBook } from "./alert-book";
export { eventViewOf } from "./archive";
export { DEFAULT_ACCUMULATOR_SETTINGS } from "./context";
export { recordCall } from "./counting";
export { HANDOVER_PAGE_SIZE, HandoverRuns } from "./handover";
export {
	exchangeRatesChanged,
	receiveShardReport,
	setAlert,
	setInvoicingThreshold,
	thresholdInvoiced,
	thresholdVoided,
} from "./head";
export { PlanBook } from "./period-plans";
export { splitPlan } from "./plan-splits";
export { readReservation, releaseReservation, reserve, tightestBudget } from "./reservations";
