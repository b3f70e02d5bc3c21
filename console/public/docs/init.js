// Starts the bundled API reference (/docs/scalar.js, from @scalar/api-reference) on this Worker's OpenAPI
// document, with everything that would reach another host turned off: no web fonts (the system's are used), no
// request proxy, no telemetry, no hosted agent or client. The page's CSP would block them anyway. (The element is
// not #api-reference with data-url: the viewer would mount itself there a second time, without this configuration.)
// Requests made from the page go to the host that serves it (the only one its CSP allows), not to the document's
// servers (wrangler dev's localhost and a templated deployment host), which are for generated clients.
Scalar.createApiReference("#reference", {
	url: "/v1/openapi.json",
	servers: [{ url: window.location.origin, description: "This server" }],
	withDefaultFonts: false,
	proxyUrl: "",
	telemetry: false,
	hideClientButton: true,
	showDeveloperTools: "never",
	agent: { disabled: true },
	mcp: { disabled: true },
	documentDownloadType: "json",
	metaData: { title: "Agent Metering & Billing API — reference" },
});
