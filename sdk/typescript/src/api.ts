/**
 * A typed client for the whole API: `paths` is generated at build time by openapi-typescript from the document the
 * service serves at /v1/openapi.json, and openapi-fetch turns it into `GET`/`POST`/`PATCH`/`DELETE` calls whose
 * paths, parameters, bodies and answers are checked by the compiler.
 *
 *   const api = createApiClient({ apiKey, baseUrl });
 *   const { data, error } = await api.GET("/v1/usage", { params: { query: { agent_key: "agent-1" } } });
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { paths } from "./generated/openapi.js";

export type { components, paths } from "./generated/openapi.js";

export type MeteringApi = Client<paths>;

export interface ApiClientOptions extends Omit<ClientOptions, "baseUrl"> {
	/** An API key (`sk_api_…`) or, for the metering endpoints and usage, an SDK key. */
	apiKey: string;
	/** e.g. `https://metering.example.com` (without `/v1`). */
	baseUrl: string;
}

export function createApiClient({ apiKey, baseUrl, headers, ...options }: ApiClientOptions): MeteringApi {
	return createClient<paths>({
		...options,
		baseUrl: baseUrl.replace(/\/+$/, ""),
		headers: { ...(headers as Record<string, string> | undefined), Authorization: `Bearer ${apiKey}` },
	});
}
