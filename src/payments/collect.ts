/**
 * Asking Stripe for the money (docs/payments.md#collection). An invoice's `collection_due` names the call the
 * service still owes Stripe; the statement that made it due (a trigger of migration 0017 as the invoice is issued,
 * paid, voided or credited, or the cron's dunning) is the one that stored the change, so nothing is lost. This
 * runs after the answer (waitUntil) and in every five-minute cron: each call carries an Idempotency-Key made from
 * the invoice, the call and the attempt, so running twice never asks twice. A call that succeeds clears the due
 * call; one that fails keeps it, with Stripe's message in `last_error`, for the next run. A run goes through every
 * due invoice once, page by page in id order (a generation may issue hundreds), a few calls at a time.
 */
import { and, asc, eq, gt, inArray, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { toMinor } from "../credits/wallet";
import { type Db, database } from "../db/client";
import { accounts, invoiceCollections, invoicePayers, invoices, payments } from "../db/schema";
import type { Env, Environment } from "../env";
import { invoiceNumber } from "../invoicing/invoices";
import { forEachLimited } from "../lib/concurrency";
import { Decimal } from "../lib/decimal";
import { publicBaseUrl, stripeSecretKey } from "../payment-provider/config";
import { type PaymentProvider, PaymentProviderError, paymentProviderFor } from "../payment-provider/provider";

/** Invoices read per page of a run. */
const PAGE = 50;
/** Calls to Stripe at once: a Worker has six connections open at most, the rest would wait in its queue. */
const AT_ONCE = 6;
/** A run stops starting pages after this long (what is left is the next run's): waitUntil allows 30 s. */
const RUN_BUDGET_MS = 20_000;

interface DueRow {
	id: string;
	number: number;
	status: string;
	currency: string;
	amount: string;
	creditsApplied: string;
	creditedToInvoice: string;
	due: "request" | "confirm" | "reask" | "cancel";
	round: number;
	attempts: number;
	paymentIntentId: string | null;
	checkoutSessionId: string | null;
	customerId: string | null;
	paymentMethodId: string | null;
}

/** "inv_…:payment_intent:1"; a re-ask after a credit note is a new round: "inv_…:round-2:payment_intent:1". */
export function collectionKey(invoiceId: string, round: number, call: string, attempt: number): string {
	return `${invoiceId}${round > 1 ? `:round-${round}` : ""}:${call}:${attempt}`;
}

/** A page of the due invoices whose id sorts after `after`, in id order; or exactly those of `ids`. */
async function dueRows(
	db: Db,
	environment: Environment,
	page: { after: string } | { ids: readonly string[] },
): Promise<DueRow[]> {
	return (
		db
			.select({
				id: invoices.id,
				number: invoices.number,
				status: invoices.status,
				currency: invoices.currency,
				amount: invoices.amount,
				creditsApplied: invoices.creditsApplied,
				creditedToInvoice: invoices.creditedToInvoice,
				due: sql<DueRow["due"]>`${invoiceCollections.collectionDue}`,
				round: invoiceCollections.collectionRound,
				attempts: invoiceCollections.collectionAttempts,
				paymentIntentId: invoiceCollections.collectionPaymentIntentId,
				checkoutSessionId: invoiceCollections.collectionCheckoutSessionId,
				customerId: accounts.stripeCustomerId,
				paymentMethodId: accounts.stripePaymentMethodId,
			})
			.from(invoices)
			// The payer's Stripe customer and payment method: a parent's under billing 'parent' (docs/account-hierarchies.md).
			.innerJoin(
				accounts,
				eq(accounts.id, sql`coalesce(${invoicePayers.payerAccountId}, ${invoices.accountId})`),
			)
			.where(
				and(
					eq(invoices.environment, environment),
					isNotNull(invoiceCollections.collectionDue),
					"ids" in page ? inArray(invoices.id, [...page.ids]) : gt(invoices.id, page.after),
				),
			)
			.orderBy(asc(invoices.id))
			.limit(PAGE)
	);
}

/** What is left to pay of each invoice: amount due less its payments, refunds counted negative (never below 0). */
async function remainingOf(db: Db, rows: readonly DueRow[]): Promise<Map<string, Decimal>> {
	const ids = rows.map((row) => row.id);
	const paid =
		ids.length === 0
			? []
			: await db
					.select({ invoiceId: payments.invoiceId, amount: payments.amount, kind: payments.kind })
					.from(payments)
					.where(inArray(payments.invoiceId, ids));
	const remaining = new Map<string, Decimal>();
	for (const row of rows) {
		const due = Decimal.from(row.amount)
			.sub(Decimal.from(row.creditsApplied))
			.sub(Decimal.from(row.creditedToInvoice));
		const mine = paid.filter((payment) => payment.invoiceId === row.id);
		// A refund row is negative; what it gave back is not owed again (invoices.ts: amount_remaining).
		const net = Decimal.sum(mine.filter((p) => p.kind !== "refund").map((p) => Decimal.from(p.amount)));
		remaining.set(row.id, Decimal.max(Decimal.ZERO, due.sub(net)));
	}
	return remaining;
}

type CollectionSet = SQLiteUpdateSetSource<typeof invoiceCollections>;

function update(db: Db, row: DueRow, set: CollectionSet) {
	// Only if nothing else changed the due call meanwhile (a payment, a void, a credit note, another run).
	return db
		.update(invoiceCollections)
		.set(set)
		.where(
			and(
				eq(invoiceCollections.id, row.id),
				eq(invoiceCollections.collectionDue, row.due),
				eq(invoiceCollections.collectionRound, row.round),
			),
		);
}

/** What every call of one collection run shares; `origin`: the issuing request's, for payment links. */
interface CollectionRun {
	db: Db;
	env: Env;
	provider: PaymentProvider;
	origin: string | null;
}

async function request({ db, env, provider, origin }: CollectionRun, row: DueRow, amount: Decimal) {
	if (row.status !== "open" || amount.isZero()) {
		// Paid or voided first (a trigger set the status), or nothing left to ask for.
		await update(db, row, {
			collectionDue: null,
			...(row.status === "open" ? { collectionStatus: "canceled" } : {}),
		});
		return;
	}
	if (row.customerId === null) throw new PaymentProviderError("The account has no Stripe customer.", null);
	const asked = {
		invoiceId: row.id,
		amount: toMinor(amount, row.currency),
		currency: row.currency.toLowerCase(),
		customer: row.customerId,
		description: `Invoice ${invoiceNumber(row.number)}`,
	};
	if (row.paymentMethodId !== null) {
		const intent = await provider.createPaymentIntent(
			{ ...asked, paymentMethod: row.paymentMethodId },
			collectionKey(row.id, row.round, "payment_intent", 1),
		);
		await recordAnswer(db, row, { collectionPaymentIntentId: intent.id });
	} else {
		const session = await provider.createCheckoutSession(
			{ ...asked, returnUrl: `${publicBaseUrl(env, origin)}/portal` },
			collectionKey(row.id, row.round, "checkout_session", 1),
		);
		await recordAnswer(db, row, {
			collectionCheckoutSessionId: session.id,
			collectionPaymentUrl: session.url,
		});
	}
}

/** Stores what Stripe answered; if the invoice was paid or voided meanwhile, what was made is canceled next. */
async function recordAnswer(db: Db, row: DueRow, set: CollectionSet) {
	await update(db, row, {
		...set,
		collectionDue: sql`CASE WHEN ${invoiceCollections.collectionStatus} = 'canceled' THEN 'cancel' ELSE NULL END`,
	});
}

async function confirm(db: Db, provider: PaymentProvider, row: DueRow) {
	if (row.paymentIntentId === null) {
		await update(db, row, { collectionDue: "request" });
		return;
	}
	const attempt = row.attempts + 1;
	const intent = await provider.confirmPaymentIntent(
		row.paymentIntentId,
		row.paymentMethodId,
		collectionKey(row.id, row.round, "confirm", attempt),
	);
	await recordAnswer(db, row, { collectionPaymentIntentId: intent.id });
}

async function cancel(provider: PaymentProvider, row: DueRow) {
	if (row.checkoutSessionId !== null) {
		await provider.expireCheckoutSession(
			row.checkoutSessionId,
			collectionKey(row.id, row.round, "expire", 1),
		);
	} else if (row.paymentIntentId !== null) {
		await provider.cancelPaymentIntent(row.paymentIntentId, collectionKey(row.id, row.round, "cancel", 1));
	}
}

/** A credit note changed what is due: the request made is canceled and a new round asks for the rest. */
async function reask(db: Db, provider: PaymentProvider, row: DueRow) {
	await cancel(provider, row);
	await update(db, row, {
		collectionDue: "request",
		collectionRound: row.round + 1,
		collectionPaymentIntentId: null,
		collectionCheckoutSessionId: null,
		collectionPaymentUrl: null,
	});
}

async function runDueCall(run: CollectionRun, row: DueRow, amount: Decimal) {
	const { db, provider } = run;
	try {
		switch (row.due) {
			case "request":
				return await request(run, row, amount);
			case "confirm":
				return await confirm(db, provider, row);
			case "reask":
				return await reask(db, provider, row);
			case "cancel":
				await cancel(provider, row);
				return await update(db, row, { collectionDue: null });
		}
	} catch (error) {
		if (!(error instanceof PaymentProviderError)) throw error;
		// A cancel Stripe refuses (4xx: already succeeded or canceled there) is not retried; anything else is.
		const final = row.due === "cancel" && error.status !== null && error.status < 500 && error.status !== 429;
		await update(db, row, { collectionLastError: error.message, ...(final ? { collectionDue: null } : {}) });
	}
}

async function runPage(run: CollectionRun, rows: readonly DueRow[]) {
	const remaining = await remainingOf(run.db, rows);
	await forEachLimited(rows, AT_ONCE, (row) => runDueCall(run, row, remaining.get(row.id) ?? Decimal.ZERO));
}

/**
 * Makes every call due in `environment`, each invoice once (never throws: it runs after answers and in the cron).
 * A re-ask is followed by its new request in the same run. `origin`: the issuing request's, for payment links.
 */
export async function collectDue(
	env: Env,
	environment: Environment,
	origin: string | null = null,
): Promise<void> {
	try {
		const provider = await paymentProviderFor(env, environment);
		if (provider === null) return;
		const db = database(env.DB);
		const run: CollectionRun = { db, env, provider, origin };
		const started = Date.now();
		let after = "";
		while (Date.now() - started < RUN_BUDGET_MS) {
			const rows = await dueRows(db, environment, { after });
			if (rows.length === 0) return;
			await runPage(run, rows);
			const reasked = rows.filter((row) => row.due === "reask").map((row) => row.id);
			if (reasked.length > 0) await runPage(run, await dueRows(db, environment, { ids: reasked }));
			after = (rows.at(-1) as DueRow).id;
		}
	} catch (error) {
		console.error(JSON.stringify({ at: "stripe-collection", environment, error: String(error) }));
	}
}

/** The five-minute cron: dunning retries whose day has come become due, then every due call is made. */
export async function collectWithCron(env: Env, now: Date): Promise<void> {
	const db = database(env.DB);
	for (const environment of ["live", "test"] as const) {
		if (stripeSecretKey(env, environment) === null) continue;
		await db
			.update(invoiceCollections)
			.set({ collectionDue: "confirm", collectionNextAttemptAt: null })
			.where(
				and(
					eq(invoiceCollections.environment, environment),
					eq(invoiceCollections.collectionStatus, "pending"),
					lte(invoiceCollections.collectionNextAttemptAt, now.toISOString()),
					isNull(invoiceCollections.collectionDue),
				),
			);
		await collectDue(env, environment);
	}
}
