/**
 * What the black-box checks of plan versions, plan changes, threshold invoices and recurring credits share: a
 * clock the Worker and its accumulators read, the monthly run driven as the cron and its queue would drive it,
 * the webhook outbox as receivers would get it, and a wait for what the service promises within seconds.
 */
import {
	createExecutionContext,
	createMessageBatch,
	createScheduledController,
	getQueueResult,
	waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import type { Env } from "../../src/env";
import entry from "../../src/index";
import { get, post } from "../helpers";
import { createPlan } from "../invoicing/fixtures";

const worker: ExportedHandler<Env> = entry;

/** Sets the clock of the Worker and the accumulators (Date only: timers stay real). */
export function clockAt(iso: string): void {
	vi.useFakeTimers({ toFake: ["Date"] });
	vi.setSystemTime(new Date(iso));
}

/** A per-unit charge of `calls` actions of type `call`. */
export const perCall = (unitPrice: number, extra: Record<string, unknown> = {}) => ({
	metric: "calls",
	source: { kind: "action", type: "call", aggregate: "count" },
	model: "per_unit",
	unit_price: unitPrice,
	...extra,
});

/** A graduated charge of `calls`: up to `upTo` calls at `a` each, the rest at `b`. */
export const tieredCalls = (upTo: number, a: number, b: number) => ({
	metric: "calls",
	source: { kind: "action", type: "call", aggregate: "count" },
	model: "tiered",
	tiers: [
		{ up_to: upTo, unit_price: a },
		{ up_to: null, unit_price: b },
	],
});

/** A plan created with a name of its own (so that line descriptions can name it). */
export async function namedPlan(name: string, fields: Record<string, unknown>) {
	return (await createPlan({ name, ...fields })) as { id: string; currency: string; version?: number };
}

export async function newVersion(planId: string, body: Record<string, unknown>) {
	const response = await post(`/v1/pricing/rate-plans/${planId}/versions`, { name: "Plan", ...body });
	expect(response.status, JSON.stringify(response.body)).toBe(201);
	return response.body;
}

export async function subscription(id: string) {
	const response = await get(`/v1/subscriptions/${id}`);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body;
}

/** The events of one kind in the webhook outbox whose data match. */
export async function outbox(kind: string, match: (data: Record<string, any>) => boolean) {
	const { results } = await env.DB.prepare(
		"SELECT id, event, data FROM webhook_events WHERE event = ?1 ORDER BY created_at, id",
	)
		.bind(kind)
		.all<{ id: string; event: string; data: string }>();
	return results.map((row) => ({ ...row, data: JSON.parse(row.data) })).filter((row) => match(row.data));
}

/** Polls `probe` until it returns a value (not undefined) or `ms` pass on the real clock. */
export async function within<T>(ms: number, probe: () => Promise<T | undefined>): Promise<T | undefined> {
	const started = performance.now();
	for (;;) {
		const value = await probe();
		if (value !== undefined) return value;
		if (performance.now() - started > ms) return undefined;
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
}

/** The first instant of the month after the given ISO instant's month. */
export const nextMonthStart = (iso: string) => {
	const d = new Date(iso);
	return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
};

/**
 * The monthly run at 00:05 UTC on the 1st of `month` ("YYYY-MM"): the cron fans out invoice jobs, which are handed
 * to the Worker's queue handler as the queue would hand them (the local queue would deliver on real timers).
 */
export async function monthlyRun(month: string): Promise<void> {
	const sent: unknown[] = [];
	const spy = vi.spyOn(env.INVOICE_QUEUE, "sendBatch").mockImplementation(async (messages) => {
		for (const message of messages) sent.push(message.body);
		return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
	});
	try {
		const scheduledTime = Date.parse(`${month}-01T00:05:00.000Z`);
		const cronCtx = createExecutionContext();
		await worker.scheduled?.(createScheduledController({ cron: "5 0 1 * *", scheduledTime }), env, cronCtx);
		await waitOnExecutionContext(cronCtx);
		const batch = createMessageBatch(
			"invoice-generation",
			sent.map((body, i) => ({ id: `job-${i}`, timestamp: new Date(), attempts: 1, body })),
		);
		const ctx = createExecutionContext();
		await worker.queue?.(batch as MessageBatch, env, ctx);
		const result = await getQueueResult(batch, ctx);
		expect(result.retryMessages, "invoice jobs the queue handler asked to retry").toEqual([]);
	} finally {
		spy.mockRestore();
	}
}
