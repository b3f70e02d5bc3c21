/**
 * Which host names a webhook may be sent to, judged as written and never looked up: a resolver inside the
 * operator's network may answer a local or special-use name with an address of its own, so such names are refused
 * by their form alone.
 */

export type ReceiverUrlVerdict = { ok: true } | { ok: false; reason: string };

export const refuse = (reason: string) => ({ ok: false, reason }) as const;

export const PUBLIC_ONLY = "webhooks are sent only to public host names and public IP addresses";

/**
 * A host name as written: a public name has at least two labels of letters, digits and inner hyphens, no trailing
 * dot, and no suffix that is local or special-use by definition (RFC 6761, RFC 6762, RFC 8375, RFC 9476, the
 * `.internal` of cloud providers).
 */
export function judgeHostName(written: string): ReceiverUrlVerdict {
	const host = written.toLowerCase();
	if (host.endsWith(".")) {
		return refuse(`The url's host ${written} ends with a dot; write the host name without it.`);
	}
	const labels = host.split(".");
	if (host.length > 253 || !labels.every(isHostLabel)) {
		return refuse(
			`The url's host ${written} is not a valid host name (labels of letters, digits and inner hyphens, 63 characters at most).`,
		);
	}
	if (labels.length < 2) {
		return refuse(
			`The url's host ${written} is a single-label name, which only a local network resolves; ${PUBLIC_ONLY}.`,
		);
	}
	const suffix = SPECIAL_USE_SUFFIXES.find((name) => host === name || host.endsWith(`.${name}`));
	if (suffix) {
		return refuse(
			`The url's host ${written} is under .${suffix}, a local or special-use name; ${PUBLIC_ONLY}.`,
		);
	}
	return { ok: true };
}

const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Letters, digits and inner hyphens; hyphens in the 3rd and 4th places only for IDNA's `xn--`. */
const isHostLabel = (label: string) =>
	HOST_LABEL.test(label) && (label.slice(2, 4) !== "--" || label.startsWith("xn--"));

/** Names no public receiver can have: local by definition, or reserved so that they never resolve publicly. */
const SPECIAL_USE_SUFFIXES = [
	"localhost",
	"local",
	"internal",
	"localdomain",
	"home.arpa",
	"test",
	"invalid",
	"example",
	"onion",
	"alt",
];
