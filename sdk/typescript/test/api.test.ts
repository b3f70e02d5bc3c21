import { describe, expect, it } from "vitest";
import { createApiClient } from "../src/api";
import { json } from "./fake-fetch";

function recordingFetch(answer: (request: Request) => Response) {
	const requests: Request[] = [];
	const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
		const request = input instanceof Request ? input : new Request(input, init);
		requests.push(request.clone());
		return answer(request);
	};
	return { fetch: fetch as typeof globalThis.fetch, requests };
}

describe("createApiClient (types generated from the app's OpenAPI document)", () => {
	it("calls the API with the key, typed parameters and a typed answer", async () => {
		const { fetch, requests } = recordingFetch(() =>
			json(200, {
				start_date: "2026-11-01",
				end_date: "2026-11-30",
				usage: [{ kind: "action", type: "llm_call", count: 3, value: null }],
			}),
		);
		const api = createApiClient({ apiKey: "sk_test_abc", baseUrl: "http://metering.test/", fetch });
		const { data, error } = await api.GET("/v1/usage", { params: { query: { agent_key: "agent-1" } } });
		expect(error).toBeUndefined();
		const count: number | undefined = data?.usage[0]?.count;
		expect(count).toBe(3);
		expect(requests[0]?.url).toBe("http://metering.test/v1/usage?agent_key=agent-1");
		expect(requests[0]?.headers.get("authorization")).toBe("Bearer sk_test_abc");
	});

	it("sends typed bodies and answers the API's error body", async () => {
		const { fetch, requests } = recordingFetch(() =>
			json(400, {
				error: {
					code: "validation_error",
					message: "bad",
					details: [{ path: "name", message: "x" }],
					request_id: "r",
				},
			}),
		);
		const api = createApiClient({ apiKey: "sk_api_x", baseUrl: "http://metering.test", fetch });
		const { data, error, response } = await api.POST("/v1/agents", {
			body: { name: "Lead qualifier", type: "langgraph" },
		});
		expect(response.status).toBe(400);
		expect(data).toBeUndefined();
		expect(error?.error.code).toBe("validation_error");
		expect(await requests[0]?.json()).toEqual({ name: "Lead qualifier", type: "langgraph" });
		expect(requests[0]?.method).toBe("POST");
	});

	it("refuses at compile time what the document forbids (checked by tsc in npm run build:sdk)", () => {
		const api = createApiClient({
			apiKey: "k",
			baseUrl: "http://x",
			fetch: (async () => json(200, {})) as typeof fetch,
		});
		const call = () => {
			// @ts-expect-error: the agent type is one of langgraph, crewai, n8n, custom
			void api.POST("/v1/agents", { body: { name: "A", type: "autogen" } });
			// @ts-expect-error: no such path
			void api.GET("/v1/nothing-here");
		};
		expect(typeof call).toBe("function");
	});
});
