/**
 * The model prices an accumulator costs its events with (model-costs/event-cost.ts): the catalog, in code, and
 * the environment's custom prices, read from D1 at most once per REFRESH_MS — never per event. A custom price
 * created or deleted applies to the events counted after the next refresh (docs/model-prices.md).
 *
 * The cost of the event being counted is kept (`costOf`), so the aggregates and the plan's metrics, which both
 * need it, compute it once.
 */
import { database } from "../../../db/client";
import type { Environment } from "../../../env";
import { PriceBook as Book, type PriceBook } from "../../../model-costs/cost";
import { type EventCost, eventCost } from "../../../model-costs/event-cost";
import { customPrices } from "../../../model-costs/price-book";
import { catalogPrices, type ModelPrice } from "../../../model-costs/prices";
import type { MeteringEvent } from "../types";

/** How long the custom prices read from D1 are used before they are read again. */
export const PRICES_REFRESH_MS = 30_000;
const RETRY_MS = 5_000;

let catalogBook: PriceBook | undefined;

/** The catalog alone: the book of an accumulator that has not read its environment's custom prices yet. */
function catalogOnly(): PriceBook {
	catalogBook ??= new Book(catalogPrices());
	return catalogBook;
}

/** The catalog with these custom prices. */
export function bookOf(custom: readonly ModelPrice[]): PriceBook {
	return custom.length === 0 ? catalogOnly() : new Book([...catalogPrices(), ...custom]);
}

export class ModelPriceCache {
	private current: PriceBook = catalogOnly();
	private readAt = Number.NEGATIVE_INFINITY;
	private environment: Environment | null = null;
	private lastEvent: MeteringEvent | null = null;
	private lastCost: EventCost | null = null;
	/** The custom prices last read (null: none read yet). */
	custom: ModelPrice[] | null = null;
	/** Whether the store notes the custom prices its events were counted with (rerate.ts). */
	noted = false;

	constructor(private readonly refreshMs = PRICES_REFRESH_MS) {}

	get book(): PriceBook {
		return this.current;
	}

	/** When the prices held are next read again (by the next count or flush from then on). */
	get staleAt(): number {
		return this.readAt + this.refreshMs;
	}

	/**
	 * Reads the environment's custom prices when the ones held are older than the refresh interval; answers them
	 * when it read them (null when those held were fresh enough), after handing them to `onRead`.
	 */
	async refresh(
		d1: D1Database,
		environment: Environment,
		now = Date.now(),
		onRead?: (custom: ModelPrice[]) => void,
	): Promise<ModelPrice[] | null> {
		if (this.environment === environment && now - this.readAt < this.refreshMs) return null;
		let custom: ModelPrice[];
		try {
			custom = await customPrices(database(d1), { environment });
		} catch (error) {
			// Costing never refuses or delays an event: the prices held serve until a read succeeds (a few
			// seconds later at the earliest).
			console.error(JSON.stringify({ at: "usage-accumulator.prices", error: String(error) }));
			if (this.environment === environment) this.readAt = now - this.refreshMs + RETRY_MS;
			return null;
		}
		this.current = bookOf(custom);
		this.custom = custom;
		this.readAt = now;
		this.environment = environment;
		this.lastEvent = null;
		this.lastCost = null;
		// In the same synchronous run as the swap: nothing is counted between the new prices and their re-rating.
		onRead?.(custom);
		return custom;
	}

	/** Forget the custom prices held: the next refresh reads them (a test, or a price just changed). */
	expire(): void {
		this.readAt = Number.NEGATIVE_INFINITY;
	}

	/** What an action cost (null: it says nothing of cost), computed once per event however many ask. */
	costOf(event: MeteringEvent): EventCost | null {
		if (event === this.lastEvent) return this.lastCost;
		const cost = event.kind === "action" && event.metadata !== null ? eventCost(event, this.current) : null;
		this.lastEvent = event;
		this.lastCost = cost;
		return cost;
	}
}
