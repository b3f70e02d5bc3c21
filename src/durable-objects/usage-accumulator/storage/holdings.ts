/**
 * Which instances an accumulator holds (the `holdings` table): per agent key, the newest membership generation
 * told (identity.ts: membershipGeneration), whether this accumulator holds the key at it, and the generation at
 * which it took the key's dedupe keys over from earlier holders (handover.ts). Told two ways: synchronously by
 * subscription changes (apply), and by every event's placement claim (claimAndHold); the newer generation wins.
 *
 * The rows read are kept in memory by agent key, so a warm record call reads none. Every write to a key's row
 * forgets the key; a transaction that rolled back forgets them all (store.ts).
 */

import type { AccumulatorIdentity } from "../identity";
import type { Handover, HoldingChange } from "../types";

type HoldingRow = { agent_key: string; generation: number; held: number; imported: number };
export type HoldingWrite = [agentKey: string, generation: number, held: 0 | 1];

// Bound values for the few keys of most calls (cheaper than json_each), json_each beyond.
const FEW_KEYS = 16;
const MAX_KNOWN_HOLDINGS = 10_000;

export class Holdings {
	// The rows read here, by agent key (null: none stored).
	private readonly known = new Map<string, HoldingRow | null>();

	constructor(private readonly sql: SqlStorage) {}

	/** After a transaction that may have written rows and rolled back. */
	forget(): void {
		this.known.clear();
	}

	/** Writes the rows; a row older than the generation stored for its key changes nothing. */
	apply(rows: readonly HoldingWrite[]): void {
		if (rows.length === 0) return;
		for (const [agentKey] of rows) this.known.delete(agentKey);
		this.sql.exec(
			`INSERT INTO holdings (agent_key, generation, held)
			SELECT h.value ->> 0, h.value ->> 1, h.value ->> 2 FROM json_each(?) AS h WHERE true
			ON CONFLICT (agent_key) DO UPDATE SET generation = excluded.generation, held = excluded.held
			WHERE excluded.generation > holdings.generation`,
			JSON.stringify(rows),
		);
	}

	/** Membership changes as subscriptions tell them. */
	applyChanges(changes: readonly HoldingChange[]): void {
		this.apply(changes.map((c) => [c.agentKey, c.generation, c.held ? 1 : 0]));
	}

	/**
	 * Applies the placement's claims and answers which of the keys this accumulator holds: one read, and a write
	 * only for claims newer than what it knows. An instance accumulator holds its own instance until told it was
	 * released; a subscription's holds none it was not told of. A held key whose dedupe keys were not yet taken
	 * over at its generation (handover.ts) is not counted yet: it is listed in `handovers`.
	 */
	claimAndHold(
		agentKeys: readonly string[],
		claims: Record<string, number>,
		identity: AccumulatorIdentity,
	): { held: Set<string>; handovers: Handover[] } {
		const known = this.rows([...new Set([...agentKeys, ...Object.keys(claims)])]);
		const newer = Object.entries(claims).filter(
			([agentKey, generation]) => generation > (known.get(agentKey)?.generation ?? -1),
		);
		this.apply(newer.map(([agentKey, generation]) => [agentKey, generation, 1]));
		const claimed = new Map(newer);
		const held = new Set<string>();
		const handovers: Handover[] = [];
		for (const agentKey of agentKeys) {
			const row = known.get(agentKey);
			const claim = claimed.get(agentKey);
			// Generation 0: the instance was never in a subscription, so no other accumulator has its keys.
			if (claim !== undefined) {
				if (claim === 0 || (row !== undefined && row.imported >= claim)) held.add(agentKey);
				else handovers.push({ agentKey, generation: claim });
			} else if (row === undefined) {
				if (identity.kind === "inst" && identity.id === agentKey) held.add(agentKey);
			} else if (row.held === 1) {
				if (row.generation === 0 || row.imported >= row.generation) held.add(agentKey);
				else handovers.push({ agentKey, generation: row.generation });
			}
		}
		return { held, handovers };
	}

	/** The stored rows of the keys, read only for keys not known from an earlier read. */
	private rows(keys: readonly string[]): Map<string, HoldingRow> {
		const rows = new Map<string, HoldingRow>();
		const unknown: string[] = [];
		for (const key of keys) {
			const row = this.known.get(key);
			if (row === undefined) unknown.push(key);
			else if (row !== null) rows.set(key, row);
		}
		if (unknown.length === 0) return rows;
		const stored =
			unknown.length <= FEW_KEYS
				? this.sql.exec<HoldingRow>(
						`SELECT agent_key, generation, held, imported FROM holdings WHERE agent_key IN (${unknown.map(() => "?").join(", ")})`,
						...unknown,
					)
				: this.sql.exec<HoldingRow>(
						"SELECT agent_key, generation, held, imported FROM holdings WHERE agent_key IN (SELECT value FROM json_each(?))",
						JSON.stringify(unknown),
					);
		for (const row of stored) rows.set(row.agent_key, row);
		if (this.known.size + unknown.length > MAX_KNOWN_HOLDINGS) this.known.clear();
		for (const key of unknown) this.known.set(key, rows.get(key) ?? null);
		return rows;
	}

	/** After every earlier holder handed its keys over: the instance's events are counted from now on. */
	markTakenOver({ agentKey, generation }: Handover): void {
		this.known.delete(agentKey);
		this.sql.exec(
			"UPDATE holdings SET imported = ?2 WHERE agent_key = ?1 AND generation = ?2 AND imported < ?2",
			agentKey,
			generation,
		);
	}

	list(): HoldingChange[] {
		return this.sql
			.exec<{ agent_key: string; generation: number; held: number }>(
				"SELECT * FROM holdings ORDER BY agent_key",
			)
			.toArray()
			.map((r) => ({ agentKey: r.agent_key, generation: r.generation, held: r.held === 1 }));
	}
}
