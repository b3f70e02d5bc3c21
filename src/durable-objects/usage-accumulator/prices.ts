/**
 * The model prices an accumulator costs its events with (model-prices/event-cost.ts): the catalog, in code, and
 * the environment's custom prices, read from D1 at most once per REFRESH_MS — never per event. A custom price
 * created or deleted applies to the events counted after the next refresh (docs/model-prices.md).
 *
 * The cost of the event being counted is kept (`costOf`), so the aggregates and the plan's metrics, which both
 * need it, compute it once.
 */
import { database } from "../../db/client";
import type { Environment } from "../../env";
import { PriceBook as Book, type PriceBook } from "../../model-prices/cost";
import { customPrices } from "../../model-prices/custom-prices";
import { type EventCost, eventCost } from "../../model-prices/event-cost";
import { catalogPrices } from "../../model-prices/prices";
import type { MeteringEvent } from "./types";

/** How long the custom prices read from D1 are used before they are read again. */
export const PRICES_REFRESH_MS = 30_000;

let catalogBook: PriceBook | undefined;

/** The catalog alone: the book of an accumulator that has not read its environment's custom prices yet. */
function catalogOnly(): PriceBook {
	catalogBook ??= new Book(catalogPrices());
	return catalogBook;
}

export class ModelPriceCache {
	private current: PriceBook = catalogOnly();
	private readAt = Number.NEGATIVE_INFINITY;
	private environment: Environment | null = null;
	private lastEvent: MeteringEvent | null = null;
	private lastCost: EventCost | null = null;

	constructor(private readonly refreshMs = PRICES_REFRESH_MS) {}

	get book(): PriceBook {
		return this.current;
	}

	/** Reads the environment's custom prices when the ones held are older than the refresh interval. */
	async refresh(d1: D1Database, environment: Environment, now = Date.now()): Promise<void> {
		if (this.environment === environment && now - this.readAt < this.refreshMs) return;
		const custom = await customPrices(database(d1), { environment });
		this.current = custom.length === 0 ? catalogOnly() : new Book([...catalogPrices(), ...custom]);
		this.readAt = now;
		this.environment = environment;
		this.lastEvent = null;
		this.lastCost = null;
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
