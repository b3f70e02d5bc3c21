#!/usr/bin/env node
// A webhook receiver to try deliveries with: listens on loopback, checks both signatures of every delivery with the
// endpoint's signing secret, prints it, and answers 204 (or 400 when a signature does not match). Node's standard
// library only, so it runs from a clone without `npm install`. docs/webhooks.md says what the signatures are.
//
//   node scripts/webhook-receiver.mjs --port 3000 --secret whsec_…     (or WEBHOOK_SECRET=whsec_… in the environment)
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const usage = `Usage: node scripts/webhook-receiver.mjs [--port 3000] [--secret whsec_…] [--host 127.0.0.1]

Receives webhook deliveries on every path of http://localhost:<port>, verifies X-Webhook-Signature and the
Standard Webhooks signature with the endpoint's secret, prints each delivery and answers 204 (400 if a
signature does not match). The secret may also come from WEBHOOK_SECRET, the port from PORT. Without --host it
listens on both loopback addresses, 127.0.0.1 and [::1].`;

/** How far a delivery's webhook-timestamp may be from this clock, in seconds (older ones may be replays). */
const TOLERANCE_SECONDS = 300;

const { values: options } = parseArgs({
	options: {
		port: { type: "string", default: process.env.PORT ?? "3000" },
		secret: { type: "string", default: process.env.WEBHOOK_SECRET ?? "" },
		host: { type: "string" },
		help: { type: "boolean", short: "h", default: false },
	},
});
if (options.help) {
	console.log(usage);
	process.exit(0);
}
const secret = options.secret;
const port = Number(options.port);
if (!/^whsec_[A-Za-z0-9+/=]+$/.test(secret) || !Number.isInteger(port) || port < 0 || port > 65535) {
	console.error(
		`A signing secret (whsec_…, from the endpoint's create answer) and a port are needed.\n\n${usage}`,
	);
	process.exit(2);
}

const same = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Why the delivery is not to be trusted, or null when both of its signatures match. */
function verificationError(body, headers, now = Date.now()) {
	// The simple signature: the hex HMAC-SHA256 of the raw body, keyed with the whole secret string.
	const hex = createHmac("sha256", secret).update(body).digest("hex");
	if (!same(hex, String(headers["x-webhook-signature"] ?? ""))) return "X-Webhook-Signature does not match";
	// The Standard Webhooks signature binds the event id and the time of the attempt too.
	const id = String(headers["webhook-id"] ?? "");
	const timestamp = String(headers["webhook-timestamp"] ?? "");
	if (!/^\d+$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) {
		return "webhook-timestamp is missing or more than 5 minutes from this clock";
	}
	const key = Buffer.from(secret.slice("whsec_".length), "base64");
	const expected = `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
	const given = String(headers["webhook-signature"] ?? "").split(" ");
	return given.some((signature) => same(signature, expected)) ? null : "webhook-signature does not match";
}

function handle(request, response) {
	if (request.method !== "POST") {
		response.writeHead(200, { "Content-Type": "text/plain" }).end("webhook receiver: POST deliveries here\n");
		return;
	}
	const chunks = [];
	request.on("data", (chunk) => chunks.push(chunk));
	request.on("end", () => {
		const body = Buffer.concat(chunks).toString("utf8");
		const problem = verificationError(body, request.headers);
		if (problem) {
			console.log(`rejected ${request.headers["x-webhook-id"] ?? "(no id)"} on ${request.url}: ${problem}`);
			response.writeHead(400, { "Content-Type": "text/plain" }).end(`${problem}\n`);
			return;
		}
		let event;
		try {
			event = JSON.parse(body);
		} catch {
			event = { event: "(not JSON)", id: request.headers["x-webhook-id"], data: body };
		}
		const test = event.test === true ? " (test)" : "";
		console.log(
			`verified ${event.event} ${event.id}${test} on ${request.url}: ${JSON.stringify(event.data)}`,
		);
		response.writeHead(204).end();
	});
}

const hosts = options.host ? [options.host] : ["127.0.0.1", "::1"];
let listening = 0;
const servers = hosts.map((host) => {
	const server = createServer(handle);
	server.on("error", (error) => {
		// A machine without IPv6 has no [::1]: the other loopback address is enough.
		if (host === "::1" && hosts.length > 1 && error.code === "EADDRNOTAVAIL") return;
		console.error(`cannot listen on ${host}:${port}: ${error.message}`);
		process.exit(1);
	});
	server.listen(port, host, () => {
		listening += 1;
		if (listening === 1) {
			const { port: bound } = server.address();
			console.log(
				`Webhook receiver on http://localhost:${bound}/ (any path), verifying with ${secret.slice(0, 10)}…`,
			);
		}
	});
	return server;
});

for (const signal of ["SIGINT", "SIGTERM"]) {
	process.on(signal, () => {
		for (const server of servers) server.close();
		process.exit(0);
	});
}
