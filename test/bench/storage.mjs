// Bytes on disk of each local store under `wrangler dev --persist-to`: D1, the usage accumulators' SQLite
// files, the R2 archive. Local SQLite files are what production stores measure too (D1 and SQLite-backed
// Durable Objects bill the database size), so bytes per event compare across stores.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function filesUnder(dir) {
	let entries;
	try {
		entries = readdirSync(dir, { withFileTypes: true });
	} catch {
		return [];
	}
	return entries.flatMap((entry) => {
		const path = join(dir, entry.name);
		return entry.isDirectory() ? filesUnder(path) : [path];
	});
}

/** Bytes per store: `d1`, `accumulators` (UsageAccumulator objects), `archive` (R2). */
export function storeBytes(state) {
	const bytes = { d1: 0, accumulators: 0, archive: 0 };
	for (const file of filesUnder(state)) {
		// SQLite removes its -shm and -wal files while the worker runs: one listed a moment ago may be gone.
		const size = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
		if (file.includes("/d1/")) bytes.d1 += size;
		else if (file.includes("UsageAccumulator")) bytes.accumulators += size;
		else if (file.includes("/r2/")) bytes.archive += size;
	}
	return bytes;
}
