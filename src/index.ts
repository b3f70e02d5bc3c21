import { createApp } from "./app";
import type { Env } from "./env";

export { RateLimiter } from "./durable-objects/rate-limiter/object";
export { UsageAccumulator } from "./durable-objects/usage-accumulator/object";

const app = createApp();

export default {
	fetch: app.fetch,
} satisfies ExportedHandler<Env>;
