/**
 * The interactive API reference at /docs: Scalar's viewer (@scalar/api-reference, pinned in package.json), copied
 * at build time by scripts/build-console.mjs into the Worker's static assets (/docs/scalar.js) and started by
 * /docs/init.js with our OpenAPI document. Nothing is loaded from elsewhere: the page's Content-Security-Policy
 * allows scripts, requests, fonts and images from this origin only. Styles may be inline because the viewer
 * injects its stylesheet at run time; no script may be.
 */
export const DOCS_CSP = [
	"default-src 'none'",
	"script-src 'self'",
	"style-src 'self' 'unsafe-inline'",
	"img-src 'self' data:",
	"font-src 'self' data:",
	"connect-src 'self'",
	"worker-src 'self' blob:",
	"base-uri 'none'",
	"form-action 'none'",
	"frame-ancestors 'none'",
].join("; ");

export const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Agent Metering & Billing API — reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="reference"></div>
<script src="/docs/scalar.js"></script>
<script src="/docs/init.js"></script>
<noscript>The reference needs JavaScript. The raw document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
</body>
</html>`;

/** Headers of the /docs page (the Worker answers it; its scripts are static assets with the same policy). */
export const docsHeaders: Record<string, string> = {
	"Content-Security-Policy": DOCS_CSP,
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy": "no-referrer",
	"X-Frame-Options": "DENY",
	"Cache-Control": "no-cache",
};
