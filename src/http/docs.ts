/** The interactive API reference: Scalar's viewer, loaded by the browser, reading our OpenAPI document. */
export const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent Metering & Billing API — reference</title>
</head>
<body>
<script id="api-reference" data-url="/v1/openapi.json"></script>
<script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference"></script>
<noscript>The reference needs JavaScript. The raw document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
</body>
</html>`;
