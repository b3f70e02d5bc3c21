import { describe, expect, it } from "vitest";
import { classifyIpv6, judgeReceiverUrl, parseIpv6 } from "../../src/webhooks/receiver-url";

/** The rules of local development and the tests (ALLOW_LOCAL_WEBHOOK_URLS=true). */
const LOCAL_ALLOWED = { allowLocal: true };

/** Accepted receiver URLs: host names as written, public addresses, and the three local hosts. */
const ACCEPTED_URLS = [
	"https://hooks.example.com/billing",
	"https://hooks.example.com:8443/a?b=c",
	"https://hooks.example.com",
	"https://hooks.example.com/",
	"https://hooks.example.com?x=1",
	"https://HOOKS.Example.COM/Path",
	"HTTPS://hooks.example.com/in",
	"https://my-service.internal-name.example.org/in",
	"https://xn--bcher-kva.example.com/", // bücher, in punycode
	"https://a.b/path/with%20escape?q=a:b@c/d?e",
	"https://93.184.216.34/hooks",
	"https://8.8.8.8:443/",
	"https://[2606:4700:4700::1111]/hooks",
	"https://[2001:4860:4860::8888]:8443/",
	"https://[::ffff:93.184.216.34]/",
	"https://[64:ff9b::93.184.216.34]/",
	"https://[2002:5db8:d822::1]/", // 6to4 of 93.184.216.34
	"https://172.32.0.1/", // just past 172.16/12
	"https://100.128.0.1/", // just past 100.64/10
	"http://localhost/hooks",
	"http://localhost:3000/hooks",
	"http://LOCALHOST:3000/hooks",
	"http://127.0.0.1/hooks",
	"http://127.0.0.1:8787/hooks",
	"http://[::1]:3000/hooks",
	"https://localhost:8443/hooks",
	"https://127.0.0.1/hooks",
	"https://[::1]/hooks",
	// A host name is never looked up, whatever it may resolve to.
	"https://10.0.0.1.nip.io/hooks",
];

/** Refused receiver URLs, and a word the reason must contain. */
const REFUSED_URLS: [string, string][] = [
	// Schemes and forms
	["http://example.com/hooks", "http://"],
	["ftp://example.com/hooks", "https://"],
	["javascript:alert(1)", "https://"],
	["receiver", "https://"],
	["", "https://"],
	["https:example.com", "absolute"],
	["https:/example.com", "absolute"],
	["https:///example.com", "host"],
	["https://", "host"],
	["https://:443/", "host"],
	["https://?x", "host"],
	["https://user:pw@example.com/", "user name or password"],
	["https://user@example.com/", "user name or password"],
	["https://@example.com/", "user name or password"],
	["https://example.com@169.254.169.254/", "user name or password"],
	["https:\\\\example.com", "backslashes"],
	["https://example.com\\@169.254.169.254/", "backslashes"],
	["https://example.com/a b", "spaces"],
	[" https://example.com/", "spaces"],
	["https://example.com/\n", "spaces"],
	["https://exa\tmple.com/", "spaces"],
	["https://bücher.example/", "non-ASCII"],
	["https://example.com/#frag", "fragment"],
	["https://example.com/%zz", "percent-encoded"],
	["https://example.com/<script>", "percent-encoded"],
	["https://example.com:/", "port"],
	["https://example.com:0/", "port"],
	["https://example.com:65536/", "port"],
	["https://example.com:http/", "port"],
	["https://exa%6dple.com/", "host name"],
	["https://%31%32%37.0.0.1/", "four decimal numbers"],
	["https://%31%32%37.example/", "host name"],
	["https://exa..mple.com/", "host name"],
	["https://.example.com/", "host name"],
	["https://exa!mple.com/", "host name"],
	["https://a:b:c/", "IPv6"],
	["https://[::1/", "closing"],
	["https://[fe80::1%25eth0]/", "zone"],
	["https://[v1.x]/", "IPv6"],
	["https://[1:2:3]/", "IPv6"],
	// Numeric IPv4 forms other than dotted-quad decimal
	["https://2130706433/", "four decimal numbers"],
	["https://0x7f.1/", "four decimal numbers"],
	["https://0x7f000001/", "four decimal numbers"],
	["https://017700000001/", "four decimal numbers"],
	["https://0177.0.0.1/", "four decimal numbers"],
	["https://127.1/", "four decimal numbers"],
	["https://127.0.1/", "four decimal numbers"],
	["https://127.0.0.01/", "four decimal numbers"],
	["https://1.2.3.4./", "four decimal numbers"],
	["https://256.1.1.1/", "four decimal numbers"],
	["https://foo.0x10/", "four decimal numbers"],
	["https://foo.123/", "four decimal numbers"],
	// Private, loopback, link-local, unspecified, multicast, reserved, documentation IPv4
	["https://10.0.0.1/", "private"],
	["https://10.255.255.255/", "private"],
	["https://172.16.0.1/", "private"],
	["https://172.31.255.255/", "private"],
	["https://192.168.1.1/", "private"],
	["https://100.64.0.1/", "private"],
	["https://100.127.255.254/", "private"],
	["https://169.254.169.254/latest/meta-data/", "link-local"],
	["https://0.0.0.0/", "unspecified"],
	["https://0.1.2.3/", "unspecified"],
	["https://127.0.0.2/", "loopback"],
	["https://127.255.255.255/", "loopback"],
	["http://127.0.0.2/", "http://"],
	["https://224.0.0.1/", "multicast"],
	["https://239.255.255.250/", "multicast"],
	["https://240.0.0.1/", "reserved"],
	["https://255.255.255.255/", "reserved"],
	["https://192.0.0.8/", "reserved"],
	["https://198.18.0.1/", "reserved"],
	["https://198.19.255.255/", "reserved"],
	["https://192.0.2.1/", "documentation"],
	["https://198.51.100.7/", "documentation"],
	["https://203.0.113.7/", "documentation"],
	// IPv6
	["https://[::]/", "unspecified"],
	["https://[0:0:0:0:0:0:0:1]/", "loopback"],
	["https://[0::1]/", "loopback"],
	["http://[0::1]/", "http://"],
	["https://[fc00::1]/", "private"],
	["https://[fd12:3456:789a::1]/", "private"],
	["https://[fe80::1]/", "link-local"],
	["https://[febf::1]/", "link-local"],
	["https://[ff02::1]/", "multicast"],
	["https://[::ffff:169.254.169.254]/", "link-local"],
	["https://[::ffff:a9fe:a9fe]/", "link-local"],
	["https://[::ffff:127.0.0.1]/", "loopback"],
	["https://[::ffff:10.0.0.1]/", "private"],
	["https://[64:ff9b::10.0.0.1]/", "private"],
	["https://[64:ff9b::a9fe:a9fe]/", "link-local"],
	["https://[64:ff9b:1::1]/", "reserved"],
	["https://[2002:a00:1::1]/", "private"], // 6to4 of 10.0.0.1
	["https://[::10.0.0.1]/", "reserved"],
	["https://[2001:db8::1]/", "documentation"],
	["https://[2001::1]/", "reserved"],
	["https://[100::1]/", "reserved"],
];

describe("judgeReceiverUrl", () => {
	it.each(ACCEPTED_URLS)("accepts %s", (url) => {
		expect(judgeReceiverUrl(url, LOCAL_ALLOWED)).toEqual({ ok: true });
	});

	it.each(REFUSED_URLS)("refuses %j (%s)", (url, word) => {
		const verdict = judgeReceiverUrl(url, LOCAL_ALLOWED);
		expect(verdict.ok).toBe(false);
		if (!verdict.ok) expect(verdict.reason).toContain(word);
	});

	it("names the host and the kind of address in the reason", () => {
		expect(judgeReceiverUrl("https://169.254.169.254/", LOCAL_ALLOWED)).toEqual({
			ok: false,
			reason: expect.stringMatching(
				/^The url's host 169\.254\.169\.254 is a link-local address; .*public IP/,
			),
		});
	});
});

describe("parseIpv6 and classifyIpv6", () => {
	it.each([
		["::", [0, 0, 0, 0, 0, 0, 0, 0]],
		["::1", [0, 0, 0, 0, 0, 0, 0, 1]],
		["1::", [1, 0, 0, 0, 0, 0, 0, 0]],
		["1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]],
		["1:2:3:4:5:6:1.2.3.4", [1, 2, 3, 4, 5, 6, 0x102, 0x304]],
		["::ffff:1.2.3.4", [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]],
		["fe80::abcd:1", [0xfe80, 0, 0, 0, 0, 0, 0xabcd, 1]],
	])("parses %s", (text, groups) => {
		expect(parseIpv6(text)).toEqual(groups);
	});

	it.each([
		"",
		":",
		":::",
		"1::2::3",
		"1:2:3:4:5:6:7",
		"1:2:3:4:5:6:7:8:9",
		"1:2:3:4:5:6:7:8::",
		"12345::",
		"g::",
		"::1.2.3",
		"::256.1.1.1",
		":1::",
	])("refuses %j", (text) => {
		expect(parseIpv6(text)).toBeNull();
	});

	it("calls global unicast public and everything outside 2000::/3 reserved", () => {
		expect(classifyIpv6(parseIpv6("2606:4700::1") as number[])).toBe("public");
		expect(classifyIpv6(parseIpv6("4000::1") as number[])).toBe("reserved");
	});
});
