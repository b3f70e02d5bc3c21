// The few Node built-ins the Node-side tests use; the project's types are the Workers' (no @types/node).
declare module "node:child_process" {
	export function execFileSync(file: string, args: string[], options: { encoding: "utf8" }): string;
}
declare module "node:fs" {
	export function readFileSync(path: string): Uint8Array;
	export function writeFileSync(path: string, data: Uint8Array): void;
	export function mkdirSync(path: string, options?: { recursive?: boolean }): void;
}
