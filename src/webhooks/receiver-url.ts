/**
 * Which URLs a webhook may be sent to. A webhook endpoint is a URL the service itself connects to, so without a
 * rule an admin could point it at the service's own network (cloud metadata at 169.254.169.254, private ranges,
 * loopback) and read the answers back through the delivery log: a port scanner. The rule:
 *
 * - `https://host[:port][/path][?query]`, written as RFC 3986 says, judged as written and not as a lenient parser
 *   (the WHATWG URL parser) would repair it: `https:example.com`, `https:///example.com`, backslashes, spaces,
 *   user names and passwords, fragments and non-dotted-quad numeric hosts (`https://2130706433/`,
 *   `https://0x7f.1/`, `https://127.1/`) are refused;
 * - the host is a host name or a public IP address; addresses in private, loopback, link-local, unspecified,
 *   multicast, reserved or documentation ranges are refused, including IPv4 addresses wrapped in IPv6 (IPv4-mapped,
 *   NAT64, 6to4);
 * - a host name is judged as written, never looked up (receiver-host-name.ts): names that are local or special-use
 *   by their form (one label, a trailing dot, `.internal`, `.localhost`…) are refused, as a resolver inside the
 *   operator's network could answer them with an address of its own;
 * - `localhost`, `127.0.0.1` and `[::1]`, written exactly so, are allowed over http or https only where the Worker
 *   variable ALLOW_LOCAL_WEBHOOK_URLS is "true" (`npm run dev` and the tests): local development, never a deployment.
 *
 * Pure: no I/O, so it is checked on create and PATCH and again before every delivery.
 */

import { judgeHostName, PUBLIC_ONLY, type ReceiverUrlVerdict, refuse } from "./receiver-host-name";

export type { ReceiverUrlVerdict };

export interface ReceiverUrlRules {
	/** localhost, 127.0.0.1 and [::1] are allowed (ALLOW_LOCAL_WEBHOOK_URLS). */
	allowLocal: boolean;
}

/** The rules where the Worker runs: local receivers only where the operator's variable says so. */
export const receiverUrlRules = (env: { ALLOW_LOCAL_WEBHOOK_URLS?: string }): ReceiverUrlRules => ({
	allowLocal: env.ALLOW_LOCAL_WEBHOOK_URLS === "true",
});

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** RFC 3986 path and query characters (pchar, "/" and "?"); "%" only as a %XX escape, checked apart. */
const PATH_AND_QUERY = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*$/;
const DOTTED_QUAD = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
/** What the WHATWG parser reads as an IPv4 number: decimal, octal (leading 0) or hex (0x). */
const NUMERIC_LABEL = /^(?:\d+|0x[0-9a-f]*)$/;

export function judgeReceiverUrl(text: string, rules: ReceiverUrlRules): ReceiverUrlVerdict {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
	if (/[\s\\\u0000-\u001f\u007f]/.test(text) || /[^\x20-\x7e]/.test(text)) {
		return refuse(
			"The url must be written without spaces, backslashes, control or non-ASCII characters (percent-encode them in the path; write international host names in punycode).",
		);
	}
	const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase();
	if (scheme !== "https" && scheme !== "http") return refuse("The url must start with https://.");
	const rest = text.slice(scheme.length + 1);
	if (!rest.startsWith("//")) {
		return refuse(
			"The url must be absolute: https:// followed by the host (e.g. https://hooks.example.com/billing).",
		);
	}
	const afterSlashes = rest.slice(2);
	const authorityEnd = afterSlashes.search(/[/?#]/);
	const authority = authorityEnd === -1 ? afterSlashes : afterSlashes.slice(0, authorityEnd);
	const pathAndQuery = authorityEnd === -1 ? "" : afterSlashes.slice(authorityEnd);
	if (authority.includes("@")) return refuse("The url must not contain a user name or password.");
	if (pathAndQuery.includes("#")) {
		return refuse("The url must not have a fragment (#…): it is never sent to the receiver.");
	}
	if (!PATH_AND_QUERY.test(pathAndQuery)) {
		return refuse("The url's path or query has a character that must be percent-encoded.");
	}

	const split = splitHostAndPort(authority);
	if (!split.ok) return split;
	const { host, port } = split;
	if (port !== undefined && !/^\d{1,5}$/.test(port)) return refuse("The url's port must be a number.");
	if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
		return refuse("The url's port must be from 1 to 65535.");
	}

	const local = LOCAL_HOSTS.has(host.toLowerCase());
	if (local && !rules.allowLocal) {
		return refuse(
			`The url's host ${host} is this machine: local receivers are allowed only in local development (ALLOW_LOCAL_WEBHOOK_URLS); ${PUBLIC_ONLY}.`,
		);
	}
	if (scheme === "http" && !local) {
		return refuse(
			rules.allowLocal
				? "Plain http:// is allowed only to localhost, 127.0.0.1 or [::1]; use https://."
				: "Plain http:// is not allowed; use https://.",
		);
	}
	if (!local) {
		const verdict = judgeHost(host);
		if (!verdict.ok) return verdict;
	}
	return crossCheckWithUrlParser(text, local);
}

function splitHostAndPort(
	authority: string,
): { ok: true; host: string; port?: string } | { ok: false; reason: string } {
	if (authority === "") return refuse("The url needs a host right after https://.");
	if (authority.startsWith("[")) {
		const close = authority.indexOf("]");
		if (close === -1) return refuse("The url's IPv6 address is missing its closing ].");
		const after = authority.slice(close + 1);
		if (after !== "" && !after.startsWith(":")) return refuse("The url's host is not valid.");
		return { ok: true, host: authority.slice(0, close + 1), port: after ? after.slice(1) : undefined };
	}
	const parts = authority.split(":");
	if (parts.length > 2) return refuse("The url's host is not valid (an IPv6 address goes in [brackets]).");
	const [host, port] = parts as [string, string | undefined];
	if (host === "") return refuse("The url needs a host right after https://.");
	return { ok: true, host, port };
}

/** A host other than the three local ones: a public IP address or a well-formed host name. */
function judgeHost(written: string): ReceiverUrlVerdict {
	const host = written.toLowerCase();
	if (host.startsWith("[")) {
		const inner = host.slice(1, -1);
		if (inner.includes("%")) return refuse("The url's IPv6 address must not carry a zone (%…).");
		const groups = parseIpv6(inner);
		if (!groups) return refuse(`The url's host ${written} is not a valid IPv6 address.`);
		return judgeAddress(written, classifyIpv6(groups));
	}
	const labels = host.endsWith(".") ? host.slice(0, -1).split(".") : host.split(".");
	if (NUMERIC_LABEL.test(labels[labels.length - 1] ?? "")) {
		if (!DOTTED_QUAD.test(host)) {
			return refuse(
				`The url's host ${written} ends in a number but is not an IPv4 address written as four decimal numbers (like 93.184.216.34); other numeric forms are refused.`,
			);
		}
		return judgeAddress(written, classifyIpv4(parseDottedQuad(host)));
	}
	return judgeHostName(written);
}

function judgeAddress(written: string, kind: AddressKind): ReceiverUrlVerdict {
	if (kind === "public") return { ok: true };
	return refuse(`The url's host ${written} is ${ARTICLE[kind]} ${kind} address; ${PUBLIC_ONLY}.`);
}

/**
 * Whatever the WHATWG parser (which fetch uses) makes of the URL must agree: it must parse, and an IP address it
 * finds must be public. A second look, so a form this module reads differently from fetch cannot slip through.
 */
function crossCheckWithUrlParser(text: string, local: boolean): ReceiverUrlVerdict {
	let parsed: URL;
	try {
		parsed = new URL(text);
	} catch {
		return refuse("The url is not a valid URL.");
	}
	if (local) return { ok: true };
	const hostname = parsed.hostname;
	if (hostname.startsWith("[")) {
		const groups = parseIpv6(hostname.slice(1, -1));
		return groups ? judgeAddress(hostname, classifyIpv6(groups)) : refuse("The url's host is not valid.");
	}
	if (DOTTED_QUAD.test(hostname)) return judgeAddress(hostname, classifyIpv4(parseDottedQuad(hostname)));
	return judgeHostName(hostname);
}

export type AddressKind =
	| "public"
	| "private"
	| "loopback"
	| "link-local"
	| "unspecified"
	| "multicast"
	| "reserved"
	| "documentation";

const ARTICLE: Record<Exclude<AddressKind, "public">, string> = {
	private: "a",
	loopback: "a",
	"link-local": "a",
	unspecified: "an",
	multicast: "a",
	reserved: "a",
	documentation: "a",
};

function parseDottedQuad(text: string): number {
	return text.split(".").reduce((value, part) => value * 256 + Number(part), 0);
}

/** [first address, prefix length, kind]: every IPv4 range that is not publicly routable. */
const IPV4_RANGES: [string, number, AddressKind][] = [
	["0.0.0.0", 8, "unspecified"],
	["10.0.0.0", 8, "private"],
	["100.64.0.0", 10, "private"], // shared address space (carrier-grade NAT)
	["127.0.0.0", 8, "loopback"],
	["169.254.0.0", 16, "link-local"], // cloud metadata services live here
	["172.16.0.0", 12, "private"],
	["192.0.0.0", 24, "reserved"], // IETF protocol assignments
	["192.0.2.0", 24, "documentation"],
	["192.88.99.0", 24, "reserved"], // 6to4 relay anycast, deprecated
	["192.168.0.0", 16, "private"],
	["198.18.0.0", 15, "reserved"], // benchmarking
	["198.51.100.0", 24, "documentation"],
	["203.0.113.0", 24, "documentation"],
	["224.0.0.0", 4, "multicast"],
	["240.0.0.0", 4, "reserved"], // includes the broadcast address 255.255.255.255
];
const IPV4_TABLE = IPV4_RANGES.map(([base, bits, kind]) => ({
	base: parseDottedQuad(base),
	size: 2 ** (32 - bits),
	kind,
}));

export function classifyIpv4(address: number): AddressKind {
	for (const { base, size, kind } of IPV4_TABLE) if (address >= base && address < base + size) return kind;
	return "public";
}

/** Eight 16-bit groups, or null when the text is not an IPv6 address (`::` and a trailing IPv4 part allowed). */
export function parseIpv6(text: string): number[] | null {
	let body = text;
	const tail: number[] = [];
	const ipv4 = /(?:^|:)((?:\d{1,3}\.){3}\d{1,3})$/.exec(body);
	if (ipv4) {
		const quad = ipv4[1] as string;
		if (!DOTTED_QUAD.test(quad)) return null;
		const value = parseDottedQuad(quad);
		tail.push(Math.floor(value / 65536), value % 65536);
		body = body.slice(0, body.length - quad.length);
		if (body.endsWith(":") && !body.endsWith("::")) body = body.slice(0, -1);
	}
	const halves = body.split("::");
	if (halves.length > 2) return null;
	const parse = (part: string) => (part === "" ? [] : part.split(":"));
	const head = parse(halves[0] as string);
	const after = halves.length === 2 ? parse(halves[1] as string) : [];
	const groups: number[] = [];
	for (const group of [...head, ...after]) if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
	const written = head.length + after.length + tail.length;
	if (halves.length === 1 ? written !== 8 : written > 7) return null;
	groups.push(...head.map((g) => Number.parseInt(g, 16)));
	for (let i = written; i < 8; i++) groups.push(0);
	groups.push(...after.map((g) => Number.parseInt(g, 16)), ...tail);
	return groups;
}

const embeddedIpv4 = (high: number, low: number) => classifyIpv4(high * 65536 + low);

export function classifyIpv6(g: number[]): AddressKind {
	const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h = 0, i = 0] = g;
	const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
	if (zeroUpTo(8)) return "unspecified";
	if (zeroUpTo(7) && i === 1) return "loopback";
	if (zeroUpTo(5) && f === 0xffff) return embeddedIpv4(h, i); // IPv4-mapped ::ffff:a.b.c.d
	if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return embeddedIpv4(h, i); // NAT64
	if (a === 0x64 && b === 0xff9b && c === 1) return "reserved"; // local-use NAT64
	if (a === 0x2002) return embeddedIpv4(b, c); // 6to4 carries an IPv4 address in its next 32 bits
	if (a === 0x2001 && b === 0x0db8) return "documentation";
	if ((a & 0xfff0) === 0x3ff0) return "documentation"; // 3fff::/20
	if (a === 0x2001 && b < 0x0200) return "reserved"; // 2001::/23, IETF protocol assignments (Teredo…)
	if ((a & 0xfe00) === 0xfc00) return "private"; // unique local fc00::/7
	if ((a & 0xffc0) === 0xfe80 || (a & 0xffc0) === 0xfec0) return "link-local"; // and deprecated site-local
	if ((a & 0xff00) === 0xff00) return "multicast";
	// Only 2000::/3 is allocated for global unicast; the rest is reserved (IPv4-compatible ::a.b.c.d among it).
	if ((a & 0xe000) !== 0x2000) return "reserved";
	return "public";
}
