// Some package mirrors lack the binaries of other platforms (biome's Android, Windows and musl builds, workerd's
// macOS and Windows builds). npm then leaves those optional packages out of package-lock.json, and `npm ci`
// refuses the lock as out of sync. This adds them back, described like their Linux sibling, so the lock is whole
// for every platform. Run after any `npm install` that rewrites the lock: `npm run lock:complete`.
import { readFileSync, writeFileSync } from "node:fs";

const path = "package-lock.json";
const lock = JSON.parse(readFileSync(path, "utf8"));
const packages = lock.packages;

const siblings = [
	{
		like: "@biomejs/cli-linux-x64",
		add: [
			["@biomejs/cli-android-arm64", "android", "arm64"],
			["@biomejs/cli-android-x64", "android", "x64"],
			["@biomejs/cli-darwin-arm64", "darwin", "arm64"],
			["@biomejs/cli-darwin-x64", "darwin", "x64"],
			["@biomejs/cli-linux-arm64-musl", "linux", "arm64", "musl"],
			["@biomejs/cli-linux-x64-musl", "linux", "x64", "musl"],
			["@biomejs/cli-win32-arm64", "win32", "arm64"],
			["@biomejs/cli-win32-x64", "win32", "x64"],
		],
	},
	{
		like: "@cloudflare/workerd-linux-64",
		add: [
			["@cloudflare/workerd-darwin-64", "darwin", "x64"],
			["@cloudflare/workerd-darwin-arm64", "darwin", "arm64"],
			["@cloudflare/workerd-windows-64", "win32", "x64"],
		],
	},
];

let added = 0;
for (const { like, add } of siblings) {
	for (const [location, model] of Object.entries(packages)) {
		if (!location.endsWith(`node_modules/${like}`)) continue;
		const folder = location.slice(0, -like.length);
		for (const [name, os, cpu, libc] of add) {
			if (packages[folder + name]) continue;
			packages[folder + name] = {
				version: model.version,
				cpu: [cpu],
				dev: model.dev,
				...(libc ? { libc: [libc] } : {}),
				license: model.license,
				optional: true,
				os: [os],
				...(model.engines ? { engines: model.engines } : {}),
			};
			added++;
		}
	}
}
const ordered = Object.fromEntries(
	Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(path, `${JSON.stringify({ ...lock, packages: ordered }, null, "\t")}\n`);
console.log(`package-lock.json: ${added} platform package entries added`);
