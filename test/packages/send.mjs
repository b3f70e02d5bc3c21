// What a user's app does with the packed SDK: copied into a scratch app where `npm install <tarball>` put it, and
// run there with METERING_BASE_URL, METERING_SDK_KEY and AGENT_KEY. It imports every entry point that needs no
// optional peer dependency, sends an action (and a metered tool call) and an outcome, reads the usage back with the
// typed client and prints one JSON line of what happened.
import { createRequire } from "node:module";
import { MeteringClient } from "@agent-metering/sdk";
import { createApiClient } from "@agent-metering/sdk/api";
import { meteringMiddleware } from "@agent-metering/sdk/integrations/ai-sdk";
import { meterTool } from "@agent-metering/sdk/integrations/tools";

const { METERING_BASE_URL: baseUrl, METERING_SDK_KEY: apiKey, AGENT_KEY: agentKey } = process.env;
const failures = [];
const metering = new MeteringClient({ apiKey, baseUrl, onError: (failure) => failures.push(failure) });

metering.action({
	agentKey,
	type: "llm_call",
	metadata: { model: "gpt-4o-mini", tokens: 1830, cost: 0.004 },
});
const search = meterTool("web_search", async (query) => `results for ${query}`, {
	client: metering,
	agentKey,
});
const answer = await search("pricing");
metering.outcome({ agentKey, type: "ticket_resolved", value: 1 });
await metering.shutdown();

const api = createApiClient({ apiKey, baseUrl });
const usage = await api.GET("/v1/usage", { params: { query: { agent_key: agentKey } } });

// LangChain's integration needs its optional peer @langchain/core, which this app does not install.
let langchain;
try {
	await import("@agent-metering/sdk/integrations/langchain");
	langchain = "loaded";
} catch (error) {
	langchain = String(error?.message);
}

console.log(
	JSON.stringify({
		version: createRequire(import.meta.url)("@agent-metering/sdk/package.json").version,
		answer,
		failures,
		status: usage.response.status,
		usage: usage.data?.usage,
		middleware: typeof meteringMiddleware({ client: metering, agentKey }).wrapGenerate,
		langchain,
	}),
);
