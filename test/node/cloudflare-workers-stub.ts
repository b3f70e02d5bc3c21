// Enough of "cloudflare:workers" for the app's modules to load in Node, where the OpenAPI document is checked.
export class DurableObject {}
export class WorkerEntrypoint {}
export const env = {};
