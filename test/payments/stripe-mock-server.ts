/**
 * vitest globalSetup (Node): Stripe's official mock (stripe-mock) behind a small recorder, for test/payments/.
 * The recorder forwards every request to stripe-mock and keeps what the service sent (method, path, headers, form
 * body) so tests can assert parameters, minor units and Idempotency-Keys; `/__faults` makes the next matching
 * requests answer an error or never answer, to show that collection stays pending and is retried.
 *
 * stripe-mock comes from STRIPE_MOCK_BIN, else ../shared/tools/stripe-mock beside the repository; or an already
 * running one at STRIPE_MOCK_URL. Missing: the Stripe tests fail under CI and skip with a message elsewhere.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export interface RecordedRequest {
	method: string;
	path: string;
	headers: Record<string, string>;
	body: string;
	status: number;
}

interface Fault {
	/** A substring of "METHOD path body" that the request must contain. */
	match: string;
	/** An HTTP status to answer, or "hang" to never answer. */
	answer: number | "hang";
	times: number;
	body?: unknown;
}

/** The recorder's port: fixed, because the Workers bindings are read before any setup runs. */
export const RECORDER_PORT = Number(process.env.STRIPE_RECORDER_PORT ?? 12199);

const repository = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function stripeMockBinary(): string | null {
	const candidates = [process.env.STRIPE_MOCK_BIN, resolve(repository, "../shared/tools/stripe-mock")];
	return candidates.find((path) => path !== undefined && path !== "" && existsSync(path)) ?? null;
}

async function freePort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
	const { port } = server.address() as AddressInfo;
	await new Promise((done) => server.close(done));
	return port;
}

async function waitUntilAnswering(url: string, child: ChildProcess | null): Promise<void> {
	for (let i = 0; i < 100; i++) {
		if (child?.exitCode != null) throw new Error(`stripe-mock exited with code ${child.exitCode}`);
		try {
			await fetch(`${url}/v1/customers`, { headers: { Authorization: "Bearer sk_test_123" } });
			return;
		} catch {
			await new Promise((done) => setTimeout(done, 100));
		}
	}
	throw new Error(`stripe-mock did not answer at ${url}`);
}

function readBody(request: IncomingMessage): Promise<string> {
	return new Promise((done, fail) => {
		const chunks: Buffer[] = [];
		request.on("data", (chunk: Buffer) => chunks.push(chunk));
		request.on("end", () => done(Buffer.concat(chunks).toString("utf8")));
		request.on("error", fail);
	});
}

function startRecorder(upstream: string | null): Promise<Server> {
	const recorded: RecordedRequest[] = [];
	let faults: Fault[] = [];
	const server = createServer(async (request, response) => {
		const body = await readBody(request);
		const url = request.url ?? "/";
		const reply = (status: number, answer: unknown) => {
			response.writeHead(status, { "Content-Type": "application/json" });
			response.end(JSON.stringify(answer));
		};
		if (url === "/__status") return reply(200, { stripe_mock: upstream !== null });
		if (url.startsWith("/__recorded")) return reply(200, recorded);
		if (url === "/__faults" && request.method === "POST") {
			faults.push(JSON.parse(body) as Fault);
			return reply(200, { ok: true });
		}
		if (url === "/__faults" && request.method === "DELETE") {
			faults = faults.filter((fault) => !body || !fault.match.includes(body));
			return reply(200, { ok: true });
		}
		const headers: Record<string, string> = {};
		for (const [name, value] of Object.entries(request.headers)) {
			if (typeof value === "string") headers[name.toLowerCase()] = value;
		}
		const entry: RecordedRequest = { method: request.method ?? "GET", path: url, headers, body, status: 0 };
		recorded.push(entry);
		const described = `${entry.method} ${url} ${body}`;
		const fault = faults.find((candidate) => candidate.times > 0 && described.includes(candidate.match));
		if (fault) {
			fault.times -= 1;
			if (fault.answer === "hang") return; // never answers: the service's own timeout must end the call
			entry.status = fault.answer;
			return reply(
				fault.answer,
				fault.body ?? { error: { type: "api_error", message: "Injected failure." } },
			);
		}
		if (upstream === null) return reply(503, { error: { message: "stripe-mock is not running" } });
		const forwarded = await fetch(`${upstream}${url}`, {
			method: entry.method,
			headers,
			body: entry.method === "GET" || entry.method === "HEAD" ? undefined : body,
		});
		entry.status = forwarded.status;
		response.writeHead(forwarded.status, { "Content-Type": "application/json" });
		response.end(await forwarded.text());
	});
	return new Promise((done, fail) => {
		server.once("error", fail);
		server.listen(RECORDER_PORT, "127.0.0.1", () => done(server));
	});
}

export default async function setup(): Promise<() => Promise<void>> {
	let child: ChildProcess | null = null;
	let upstream = process.env.STRIPE_MOCK_URL || null;
	if (upstream === null) {
		const binary = stripeMockBinary();
		if (binary !== null) {
			const port = await freePort();
			const httpsPort = await freePort();
			child = spawn(binary, ["-http-port", String(port), "-https-port", String(httpsPort)], {
				stdio: "ignore",
			});
			upstream = `http://127.0.0.1:${port}`;
		}
	}
	if (upstream === null && process.env.CI) {
		throw new Error(
			"stripe-mock is missing: set STRIPE_MOCK_BIN or STRIPE_MOCK_URL, or put it at ../shared/tools/stripe-mock " +
				"(go install github.com/stripe/stripe-mock@v0.186.0). The Stripe tests cannot run without it.",
		);
	}
	if (upstream !== null) await waitUntilAnswering(upstream, child);
	const recorder = await startRecorder(upstream);
	return async () => {
		await new Promise((done) => recorder.close(done));
		child?.kill();
	};
}
