/**
 * The console's only way to the service: the public /v1 API of the same origin, with the signed-in key as a
 * Bearer header. Every failure becomes an ApiFailure carrying the API's own words (error.message), its code and
 * the request id, so that a page can show what went wrong instead of going blank.
 */

export interface ErrorDetail {
	path: string;
	message: string;
}

export class ApiFailure extends Error {
	constructor(
		message: string,
		readonly status: number,
		readonly code: string,
		readonly requestId: string | null,
		readonly details: ErrorDetail[] = [],
	) {
		super(message);
		this.name = "ApiFailure";
	}
}

export type Query = Record<string, string | number | undefined | null>;

export interface Page {
	total: number;
	limit: number;
	offset: number;
}

export function withQuery(path: string, query: Query = {}): string {
	const params = new URLSearchParams();
	for (const [name, value] of Object.entries(query)) {
		if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
	}
	const text = params.toString();
	return text ? `${path}?${text}` : path;
}

interface ErrorBody {
	error?: { code?: string; message?: string; request_id?: string; details?: ErrorDetail[] };
}

export class Api {
	/** `base`: /v1 for the console; the customer portal's page talks to /portal/api with its own token. */
	constructor(
		private readonly key: string,
		private readonly base = "/v1",
	) {}

	get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
		return this.request<T>("GET", withQuery(path, query), undefined, signal);
	}

	post<T>(path: string, body?: unknown): Promise<T> {
		return this.request<T>("POST", path, body ?? {});
	}

	patch<T>(path: string, body: unknown): Promise<T> {
		return this.request<T>("PATCH", path, body);
	}

	delete(path: string): Promise<void> {
		return this.request<void>("DELETE", path);
	}

	/** A binary answer (the invoice PDF): the body as a Blob, or the API's error as an ApiFailure. */
	async blob(path: string, signal?: AbortSignal): Promise<Blob> {
		let response: Response;
		try {
			response = await fetch(`${this.base}${path}`, {
				headers: { Authorization: `Bearer ${this.key}` },
				signal,
				cache: "no-store",
			});
		} catch (error) {
			if (signal?.aborted) throw error;
			throw new ApiFailure(
				`Could not reach the API (${(error as Error).message}).`,
				0,
				"network_error",
				null,
			);
		}
		if (response.ok) return response.blob();
		const text = await response.text();
		let error: ErrorBody["error"];
		try {
			error = (JSON.parse(text) as ErrorBody).error;
		} catch {
			error = undefined;
		}
		throw new ApiFailure(
			error?.message ?? `The API answered ${response.status} ${response.statusText}.`,
			response.status,
			error?.code ?? "unknown",
			error?.request_id ?? response.headers.get("X-Request-Id"),
			error?.details ?? [],
		);
	}

	private async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
		const headers: Record<string, string> = { Authorization: `Bearer ${this.key}` };
		if (body !== undefined) headers["Content-Type"] = "application/json";
		let response: Response;
		try {
			response = await fetch(`${this.base}${path}`, {
				method,
				headers,
				body: body === undefined ? undefined : JSON.stringify(body),
				signal,
				cache: "no-store",
			});
		} catch (error) {
			if (signal?.aborted) throw error;
			throw new ApiFailure(
				`Could not reach the API (${(error as Error).message}).`,
				0,
				"network_error",
				null,
			);
		}
		const requestId = response.headers.get("X-Request-Id");
		if (response.status === 204) return undefined as T;
		const text = await response.text();
		let parsed: unknown;
		try {
			parsed = text ? JSON.parse(text) : null;
		} catch {
			parsed = null;
		}
		if (response.ok) return parsed as T;
		const error = (parsed as ErrorBody | null)?.error;
		throw new ApiFailure(
			error?.message ?? `The API answered ${response.status} ${response.statusText} without an error body.`,
			response.status,
			error?.code ?? "unknown",
			error?.request_id ?? requestId,
			error?.details ?? [],
		);
	}
}

/** Runs `work` over `items` with at most `limit` requests in flight, keeping the order of results. */
export async function mapLimited<T, R>(
	items: T[],
	limit: number,
	work: (item: T) => Promise<R>,
): Promise<R[]> {
	const results: R[] = new Array(items.length);
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			const index = next++;
			results[index] = await work(items[index] as T);
		}
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
	return results;
}
