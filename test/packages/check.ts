// Compiled with `tsc --strict` in the scratch app against the installed package's own declarations (resolved
// through its `exports` with Node's module resolution), so that a missing or misplaced .d.ts fails the check.
import { type DeliveryFailure, MeteringClient, type MeteringClientOptions } from "@agent-metering/sdk";
import { type components, createApiClient } from "@agent-metering/sdk/api";
import { meterTool } from "@agent-metering/sdk/integrations/tools";

const options: MeteringClientOptions = {
	apiKey: "sk_live_x",
	baseUrl: "http://127.0.0.1:8787",
	onError: (failure: DeliveryFailure) => console.error(failure.reason, failure.events.length),
};
const client = new MeteringClient(options);
client.action({ agentKey: "agent-1", type: "llm_call", metadata: { tokens: 10 } });
const tool: (query: string) => Promise<number> = meterTool("search", async (query: string) => query.length, {
	client,
	agentKey: "agent-1",
});

const api = createApiClient({ apiKey: "sk_live_x", baseUrl: "http://127.0.0.1:8787" });
export async function usageOf(agentKey: string): Promise<number> {
	const { data } = await api.GET("/v1/usage", { params: { query: { agent_key: agentKey } } });
	const lines: components["schemas"]["Usage"]["usage"] | undefined = data?.usage;
	// @ts-expect-error: the typed client knows the paths the API has
	await api.GET("/v1/no-such-path");
	return (lines?.length ?? 0) + (await tool(agentKey));
}
