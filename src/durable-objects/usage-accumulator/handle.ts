/**
 * How the rest of the Worker reaches usage accumulators: the client of one accumulator (interface.ts), and the
 * flush of several before invoicing. Their names, shards and generations are identity.ts, re-exported here so the
 * outside has one door; the accumulator's own files import identity.ts, never this file.
 */
import type { Env } from "../../env";
import type { UsageAggregate } from "../../pricing/quantities";
import type { MetricQuantity } from "../../pricing/sources";
import { accumulatorStub } from "./identity";
import type { RetainedEvents, UsageAccumulatorClient } from "./interface";
import type { AlertRule } from "./parts/alert-book";
import type * as Reservations from "./parts/reservations";
import { resultOf, type StepFailure } from "./step-failure";
import type { RawEventQuery } from "./storage/raw-events";
import type { RequestKey } from "./storage/reservation-requests";
import type { AdoptedEvent } from "./storage/set-aside";
import type * as Calls from "./types";
import { encodeEvents } from "./wire";

export {
	type AccumulatorIdentity,
	type AccumulatorTarget,
	accumulatorName,
	accumulatorStub,
	fnv1a,
	headAccumulator,
	MAX_SHARDS,
	membershipGeneration,
	parseAccumulatorName,
	shardOf,
	subscriptionAccumulatorOf,
	subscriptionAccumulators,
} from "./identity";

/** The named accumulator, as the rest of the Worker calls it (interface.ts). */
export function usageAccumulator(env: Env, name: string): UsageAccumulatorClient {
	return new AccumulatorClient(name, accumulatorStub(env, name));
}

/**
 * Each method is one RPC call, under the object's method name of today (object.ts keeps those names, so Workers
 * of two versions and objects of two versions can call each other during a rollout). RPC types lose the length
 * of tuples and the exact shape of answers: the casts restore what the object answers.
 */
class AccumulatorClient implements UsageAccumulatorClient {
	constructor(
		readonly name: string,
		private readonly stub: ReturnType<typeof accumulatorStub>,
	) {}

	record(request: Omit<Calls.RecordRequest, "name">): Promise<Calls.RecordResponse> {
		const { accountId, billableFrom, claims, events } = request;
		return this.stub.record({
			name: this.name,
			accountId,
			billableFrom,
			claims,
			events: encodeEvents(events),
		}) as Promise<Calls.RecordResponse>;
	}

	splitPlan(accountId: string | null, at: string): Promise<void> {
		return this.stub.splitPlan(this.name, accountId, at);
	}

	updateHoldings(accountId: string | null, changes: Calls.HoldingChange[]): Promise<void> {
		return this.stub.updateHoldings(this.name, accountId, changes);
	}

	countedUsage({ startDay, endDay, agentKey }: Calls.UsageQuery): Promise<UsageAggregate[]> {
		return this.stub.usage(startDay, endDay, agentKey) as Promise<UsageAggregate[]>;
	}

	billableUsage(queries: Calls.UsageQuery[]): Promise<UsageAggregate[][]> {
		return this.stub.usageOf(queries) as Promise<UsageAggregate[][]>;
	}

	metrics(period: string): Promise<MetricQuantity[]> {
		return this.stub.metricsOf(period) as Promise<MetricQuantity[]>;
	}

	events(query: RawEventQuery): Promise<RetainedEvents> {
		return this.stub.events(query) as Promise<RetainedEvents>;
	}

	setAlert(accountId: string | null, rule: AlertRule): Promise<void> {
		return this.stub.setAlert(this.name, accountId, rule);
	}

	setInvoicingThreshold(accountId: string | null, threshold: string | null): Promise<void> {
		return this.stub.setInvoicingThreshold(this.name, accountId, threshold);
	}

	thresholdInvoiced(accountId: string | null, answer: Calls.ThresholdAnswer): Promise<void> {
		return this.stub.thresholdInvoiced(this.name, accountId, answer);
	}

	thresholdVoided(accountId: string | null, rebilled: Calls.ThresholdRebilled): Promise<void> {
		return this.stub.thresholdVoided(this.name, accountId, rebilled);
	}

	exchangeRatesChanged(accountId: string | null): Promise<void> {
		return this.stub.exchangeRatesChanged(this.name, accountId);
	}

	removeAlert(id: string): Promise<void> {
		return this.stub.removeAlert(id);
	}

	blockedBy(): Promise<string[]> {
		return this.stub.blockedBy() as Promise<string[]>;
	}

	entitlement(): Promise<{ blockedBy: string[]; budget: Reservations.BudgetView | null }> {
		return this.stub.entitlement(this.name) as Promise<{
			blockedBy: string[];
			budget: Reservations.BudgetView | null;
		}>;
	}

	reserve(
		accountId: string | null,
		request: Reservations.ReserveRequest,
	): Promise<Reservations.ReserveAnswer> {
		return this.stub.reserve(this.name, accountId, request) as Promise<Reservations.ReserveAnswer>;
	}

	reservation(id: string): Promise<Reservations.ReservationView | null> {
		return this.stub.reservation(this.name, id) as Promise<Reservations.ReservationView | null>;
	}

	releaseReservation(id: string, request?: RequestKey): Promise<Reservations.ReleaseAnswer> {
		return this.stub.releaseReservation(this.name, id, request) as Promise<Reservations.ReleaseAnswer>;
	}

	setAsideFor(
		{ subscriptionId, from, generation }: { subscriptionId: string; from: string; generation: number },
		after: string | null,
		limit: number,
	): Promise<AdoptedEvent[]> {
		return resultOf(
			this.stub.setAsideFor(subscriptionId, from, generation, after, limit) as unknown as Promise<
				AdoptedEvent[] | StepFailure
			>,
		);
	}

	absorbedThrough(agentKey: string): Promise<string | null> {
		return this.stub.absorbedThrough(agentKey) as Promise<string | null>;
	}

	absorb(
		absorber: { accountId: string | null; billableFrom: string | null; agentKey: string },
		page: AdoptedEvent[],
	): Promise<number> {
		return resultOf(
			this.stub.absorb({ name: this.name, ...absorber }, page) as Promise<number | StepFailure>,
		);
	}

	flush(): Promise<Calls.FlushReport> {
		return this.stub.flush() as Promise<Calls.FlushReport>;
	}
}

const FLUSH_CONCURRENCY = 20;
const MAX_FLUSH_CALLS = 50;

/**
 * Writes everything the named accumulators have counted to D1 and returns once it is there. Invoicing calls it
 * for the subscriptions of a period before rating, so an invoice never misses usage still in flight.
 */
export async function flushAccumulators(env: Env, names: string[]): Promise<void> {
	const queue = [...new Set(names)];
	const worker = async () => {
		for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
			const accumulator = usageAccumulator(env, name);
			for (let call = 0; call < MAX_FLUSH_CALLS; call++) {
				if ((await accumulator.flush()).complete) break;
			}
		}
	};
	await Promise.all(Array.from({ length: Math.min(FLUSH_CONCURRENCY, queue.length) }, worker));
}
