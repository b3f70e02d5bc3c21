import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		// CI also writes the counts to a file, for the one summary line .ci/run prints last.
		reporters: process.env.CI
			? ["default", ["json", { outputFile: "test-results/vitest.json" }]]
			: ["default"],
		projects: [
			{
				// The service's tests, inside workerd with the bindings of wrangler.toml.
				plugins: [
					cloudflareTest(async () => ({
						// The sources, not wrangler.toml's main (the split build in dist/worker that wrangler uploads).
						main: "./src/index.ts",
						wrangler: { configPath: "./wrangler.toml" },
						miniflare: {
							bindings: {
								ADMIN_API_KEY: "sk_api_test_operator_key_0123456789abcdef",
								// As in `npm run dev`: webhooks may go to localhost (a deployment does not set it).
								ALLOW_LOCAL_WEBHOOK_URLS: "true",
								// Stripe (docs/payments.md): the test environment collects through stripe-mock behind the
								// recorder of test/payments/stripe-mock-server.ts; live has a webhook secret but no key.
								STRIPE_API_BASE: `http://127.0.0.1:${process.env.STRIPE_RECORDER_PORT ?? 12199}`,
								STRIPE_TEST_SECRET_KEY: "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
								STRIPE_TEST_WEBHOOK_SECRET: "whsec_test_environment_secret",
								STRIPE_WEBHOOK_SECRET: "whsec_live_environment_secret",
								PUBLIC_BASE_URL: "https://billing.example.com",
								TEST_MIGRATIONS: await readD1Migrations("./migrations"),
							},
						},
					})),
				],
				test: {
					name: "workers",
					include: ["test/**/*.test.ts"],
					exclude: ["test/node/**"],
					setupFiles: ["./test/setup.ts"],
					globalSetup: ["./test/payments/stripe-mock-server.ts"],
					testTimeout: 30_000,
				},
			},
			{
				// Checks that need Node: the OpenAPI validator compiles schemas with code generation, which workerd forbids.
				resolve: {
					alias: {
						"cloudflare:workers": fileURLToPath(
							new URL("./test/node/cloudflare-workers-stub.ts", import.meta.url),
						),
					},
				},
				test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node" },
			},
			{
				// The TypeScript SDK and its integrations, offline: fake fetch, the frameworks' own test doubles.
				test: { name: "sdk", include: ["sdk/typescript/test/**/*.test.ts"], environment: "node" },
			},
		],
	},
});
