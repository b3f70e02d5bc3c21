/**
 * Threshold invoices (docs/thresholds-and-recurring-credits.md), judged in a subscription's head with its alerts
 * (alert-book.ts): after a counting pass, in its transaction, the period's usage amount — its charge lines, no base
 * fee or minimum — less what the period's threshold invoices billed is compared with the threshold. Reaching it
 * stores a request (the period's next sequence) with the events that caused it, so a request is never lost;
 * a jump over several multiples is one request, and no other is made while one waits.
 *
 * The alarm that flushes those events to D1 then asks invoicing for the invoice, on the invoice queue
 * (alarm.ts: sendThresholdRequests), and asks again until invoicing answers (thresholdInvoiced): invoicing makes
 * the invoice of a (subscription, period, sequence) at most once, so a request asked twice is invoiced once.
 * The answer says what the threshold invoices billed so far; the next crossing is judged from there.
 *
 * Judged per metric and summed: a plan change within a period (parts of a period) adds a dimension to the
 * amount billed per metric in invoicing, not here.
 */
import { Decimal } from "../../../lib/decimal";
import { THRESHOLDS_SCHEMA } from "../storage/schema";
import type { ThresholdAnswer } from "../types";
import { type HeldConversion, inBilling } from "./rates";

type PeriodState = {
	billed: string;
	next_sequence: number;
	pending: number;
	closed: number;
};

export interface PendingRequest {
	period: string;
	sequence: number;
}

/** Requests are sent again, until answered, at most this often (a lost queue message, a failed send). */
export const RESEND_AFTER_MS = 20_000;

export class ThresholdBook {
	// undefined: not read yet; null: no threshold.
	private threshold: string | null | undefined;
	private tablesReady = false;
	private sentAt = new Map<string, number>();

	constructor(private readonly sql: SqlStorage) {}

	private ensureTables(): void {
		if (this.tablesReady) return;
		this.sql.exec(THRESHOLDS_SCHEMA);
		this.tablesReady = true;
	}

	forget(): void {
		this.threshold = undefined;
	}

	current(): string | null {
		if (this.threshold === undefined) {
			this.ensureTables();
			const row = this.sql
				.exec<{ threshold: string }>("SELECT threshold FROM invoicing_threshold WHERE id = 1")
				.toArray()[0];
			this.threshold = row?.threshold ?? null;
		}
		return this.threshold;
	}

	set(threshold: string | null): void {
		this.ensureTables();
		if (threshold === null) this.sql.exec("DELETE FROM invoicing_threshold");
		else {
			this.sql.exec("INSERT OR REPLACE INTO invoicing_threshold (id, threshold) VALUES (1, ?)", threshold);
		}
		this.threshold = threshold;
	}

	private state(period: string): PeriodState {
		this.ensureTables();
		const row = this.sql
			.exec<PeriodState>(
				"SELECT billed, next_sequence, pending, closed FROM threshold_periods WHERE period = ?",
				period,
			)
			.toArray()[0];
		return row ?? { billed: "0", next_sequence: 1, pending: 0, closed: 0 };
	}

	/** Whether judging the period needs its usage amount: a threshold, no request waiting, no regular invoice. */
	armed(period: string): boolean {
		if (this.current() === null) return false;
		const state = this.state(period);
		return state.pending === 0 && state.closed === 0;
	}

	/**
	 * Stores a request when the usage amount not yet invoiced reached the threshold; true when it did. Call only
	 * when armed(period). Amounts are in the plan's currency; with a `conversion`, what is not invoiced yet is
	 * converted to the billing currency (the threshold's) at the rate in effect now and rounded once.
	 */
	judge(period: string, usageAmount: Decimal, conversion: HeldConversion | null = null): boolean {
		const threshold = this.current();
		if (threshold === null) return false;
		const state = this.state(period);
		const unbilled = usageAmount.sub(Decimal.from(state.billed));
		if (inBilling(unbilled, conversion).lt(Decimal.from(threshold))) return false;
		this.sql.exec(
			`INSERT INTO threshold_periods (period, billed, next_sequence, pending) VALUES (?1, ?2, ?3, ?3)
			ON CONFLICT (period) DO UPDATE SET pending = ?3`,
			period,
			state.billed,
			state.next_sequence,
		);
		return true;
	}

	/** Invoicing's answer to a request: the request is done, and the period's billed amount is what it says. */
	answered(answer: ThresholdAnswer): void {
		const state = this.state(answer.period);
		if (state.pending !== answer.sequence) return;
		this.sql.exec(
			`INSERT INTO threshold_periods (period, billed, next_sequence, pending, closed) VALUES (?1, ?2, ?3, 0, ?4)
			ON CONFLICT (period) DO UPDATE SET billed = ?2, next_sequence = ?3, pending = 0, closed = ?4`,
			answer.period,
			answer.billed,
			answer.sequence + 1,
			answer.closed ? 1 : 0,
		);
		this.sentAt.delete(`${answer.period}#${answer.sequence}`);
	}

	/**
	 * A threshold invoice of the period was voided: billed is what its non-void threshold invoices bill now. A
	 * waiting request keeps waiting; its answer says billed again.
	 */
	rebilled(period: string, billed: string): void {
		this.ensureTables();
		this.sql.exec(
			`INSERT INTO threshold_periods (period, billed) VALUES (?1, ?2)
			ON CONFLICT (period) DO UPDATE SET billed = ?2`,
			period,
			billed,
		);
	}

	/** The requests waiting for their invoice. */
	pending(): PendingRequest[] {
		this.ensureTables();
		return this.sql
			.exec<{ period: string; pending: number }>(
				"SELECT period, pending FROM threshold_periods WHERE pending > 0 ORDER BY period",
			)
			.toArray()
			.map((row) => ({ period: row.period, sequence: row.pending }));
	}

	/** The waiting requests not sent in the last RESEND_AFTER_MS, now marked sent. */
	due(now: number): PendingRequest[] {
		return this.pending().filter((request) => {
			const key = `${request.period}#${request.sequence}`;
			const sent = this.sentAt.get(key);
			if (sent !== undefined && now - sent < RESEND_AFTER_MS) return false;
			this.sentAt.set(key, now);
			return true;
		});
	}

	/** A send that failed is sent again at the next alarm. */
	unsent(request: PendingRequest): void {
		this.sentAt.delete(`${request.period}#${request.sequence}`);
	}
}
