/** A fetch that answers like the batch endpoints, or as each test says, and keeps every request it got. */
export interface SentRequest {
	url: string;
	headers: Record<string, string>;
	body: { events: Record<string, unknown>[] };
}

export type Answer = Response | Error | Promise<Response | Error>;

export function fakeFetch(answer: (request: SentRequest, index: number) => Answer = accept) {
	const requests: SentRequest[] = [];
	const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
		const request: SentRequest = {
			url: String(input),
			headers: Object.fromEntries(new Headers(init?.headers).entries()),
			body: JSON.parse(String(init?.body)),
		};
		requests.push(request);
		const result = await answer(request, requests.length - 1);
		if (result instanceof Error) throw result;
		return result;
	};
	return { fetch: fetch as typeof globalThis.fetch, requests };
}

/** What the API answers to a batch of new events. */
export function accept(request: SentRequest): Response {
	const results = request.body.events.map((_, i) => ({ id: `act_${i}`, status: "processed" }));
	return json(201, { results, processed: results.length, duplicates: 0 });
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
	return new Response(JSON.stringify(body), {
		status,
		headers: { "Content-Type": "application/json", ...headers },
	});
}

export function apiError(status: number, code: string, details?: { path: string; message: string }[]) {
	return json(status, { error: { code, message: `${code} happened`, details, request_id: "req_1" } });
}
