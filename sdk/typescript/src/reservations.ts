/**
 * Budget reservations: hold the estimated cost of a step before running it, then send the step's event with
 * `metadata.reservation_id` (which settles the hold) or release it when the step fails. Unlike events, these are
 * answered at once: the agent needs the answer before it goes on. See docs/reservations.md of the service.
 */

export interface ReserveInput {
	agentKey: string;
	/** In the currency of the subscription's plan, > 0 (at most 12 decimal places). */
	amount: number;
	/** 10–3600; default 300 (the service's). */
	ttlSeconds?: number;
	description?: string;
}

export interface Reservation {
	id: string;
	agent_key: string;
	subscription_id: string;
	amount: number;
	currency: string;
	status: "held" | "settled" | "released" | "expired";
	description: string | null;
	expires_at: string;
	created_at: string;
}

/** A budget a reservation did not fit. */
export interface BudgetShortfall {
	alert_id: string;
	threshold: number;
	spent: number;
	held: number;
	requested: number;
}

/** The API refused a reservation call; `code` and `status` are the API's. */
export class MeteringApiError extends Error {
	constructor(
		readonly status: number,
		readonly code: string,
		message: string,
		readonly requestId?: string,
	) {
		super(message);
		this.name = "MeteringApiError";
	}
}

/** The reservation does not fit a budget (409 budget_exceeded): `details` name each alert it exceeds. */
export class BudgetExceededError extends MeteringApiError {
	constructor(
		message: string,
		readonly details: BudgetShortfall[],
		requestId?: string,
	) {
		super(409, "budget_exceeded", message, requestId);
		this.name = "BudgetExceededError";
	}
}

export interface ReservationTransport {
	fetch: typeof fetch;
	apiKey: string;
	baseUrl: string;
	timeoutMs: number;
}

async function request(
	transport: ReservationTransport,
	method: "GET" | "POST",
	path: string,
	body?: unknown,
): Promise<Reservation> {
	const controller = new AbortController();
	const timer = setTimeout(() => controller.abort(), transport.timeoutMs);
	let response: Response;
	let text: string;
	try {
		const headers: Record<string, string> = { Authorization: `Bearer ${transport.apiKey}` };
		if (body !== undefined) headers["Content-Type"] = "application/json";
		response = await transport.fetch(`${transport.baseUrl}${path}`, {
			method,
			headers,
			body: body === undefined ? undefined : JSON.stringify(body),
			signal: controller.signal,
		});
		text = await response.text();
	} finally {
		clearTimeout(timer);
	}
	let parsed: unknown;
	try {
		parsed = text === "" ? undefined : JSON.parse(text);
	} catch {
		parsed = undefined;
	}
	if (response.ok) return parsed as Reservation;
	const error = (
		parsed as { error?: { code?: string; message?: string; details?: unknown; request_id?: string } }
	)?.error;
	const message = error?.message ?? `HTTP ${response.status}`;
	if (error?.code === "budget_exceeded") {
		throw new BudgetExceededError(message, (error.details ?? []) as BudgetShortfall[], error.request_id);
	}
	throw new MeteringApiError(response.status, error?.code ?? "http_error", message, error?.request_id);
}

export async function createReservation(
	transport: ReservationTransport,
	input: ReserveInput,
): Promise<Reservation> {
	if (typeof input?.agentKey !== "string" || input.agentKey === "") {
		throw new TypeError("reserve: agentKey must be a non-empty string");
	}
	if (typeof input.amount !== "number" || !(input.amount > 0)) {
		throw new TypeError("reserve: amount must be a number > 0");
	}
	const body: Record<string, unknown> = { agent_key: input.agentKey, amount: input.amount };
	if (input.ttlSeconds !== undefined) body.ttl_seconds = input.ttlSeconds;
	if (input.description !== undefined) body.description = input.description;
	return request(transport, "POST", "/v1/reservations", body);
}

export function releaseReservation(transport: ReservationTransport, id: string): Promise<Reservation> {
	return request(transport, "POST", `/v1/reservations/${encodeURIComponent(id)}/release`);
}

export function getReservation(transport: ReservationTransport, id: string): Promise<Reservation> {
	return request(transport, "GET", `/v1/reservations/${encodeURIComponent(id)}`);
}
