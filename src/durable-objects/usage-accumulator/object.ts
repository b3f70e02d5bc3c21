import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";

export class UsageAccumulator extends DurableObject<Env> {}
