// `npm run dev`: apply local D1 migrations, make sure .dev.vars holds an operator key, print it, serve.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const env = { ...process.env, WRANGLER_SEND_METRICS: "false" };
const wrangler = ["node_modules/wrangler/bin/wrangler.js"];

function operatorKey() {
	const existing = existsSync(".dev.vars") ? readFileSync(".dev.vars", "utf8") : "";
	const match = /^ADMIN_API_KEY\s*=\s*"?([^"\n]+)"?/m.exec(existing);
	if (match) return match[1];
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	const key = `sk_api_${Array.from(randomBytes(40), (b) => alphabet[b % 62]).join("")}`;
	const separator = existing && !existing.endsWith("\n") ? "\n" : "";
	writeFileSync(".dev.vars", `${existing}${separator}ADMIN_API_KEY="${key}"\n`);
	return key;
}

const key = operatorKey();
const migrate = spawnSync(process.execPath, [...wrangler, "d1", "migrations", "apply", "DB", "--local"], {
	stdio: "inherit",
	env: { ...env, CI: "true" },
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

console.log(`\nOperator (admin) API key, from .dev.vars:\n\n  ${key}\n`);
console.log(`Try: curl -H "Authorization: Bearer ${key}" http://localhost:8787/v1/agents\n`);

const dev = spawn(process.execPath, [...wrangler, "dev", ...process.argv.slice(2)], {
	stdio: "inherit",
	env,
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => process.exit(code ?? 0));
