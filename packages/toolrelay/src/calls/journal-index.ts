/**
 * The state of a call journal in memory, shared by {@link MemoryCallJournal} and the file journal
 * (which replays its file into one): records by key, aliases, tombstones, and the bounds of a
 * {@link JournalRetention}. Pure: no I/O, no clock of its own (every operation takes `now`, the
 * journal's clock in epoch ms, which is also each record's "last write" time).
 *
 * Eviction is lazy (on every write and `find`), oldest first, O(1) amortized: records live in two
 * insertion-ordered maps (`started`, `settled`), re-inserted on every write, so the oldest is first.
 * Age turns any record into a tombstone; the count and size caps take only settled records (a
 * `started` record is what protects a non-idempotent call from a second run, so only age ends it).
 */
import { ToolrelayError } from "../errors.js";
import type { ToolCallResponseBody } from "../wire/index.js";
import { DEFAULT_JOURNAL_RETENTION, type JournalEntry, type JournalRetention } from "./call-journal.js";

/** A record or tombstone as the index holds it: the entry, when it was last written (epoch ms) and the aliases that point at it. */
export interface IndexedEntry {
  readonly entry: JournalEntry;
  readonly writtenAt: number;
  readonly aliases: readonly string[];
}

/** What `settle` did: `settled`; or ignored because the key is `unknown`, `expired` (a tombstone) or `already-settled` (the first response stays). */
export type SettleResult = "settled" | "unknown" | "expired" | "already-settled";

/** What `alias` did: `aliased`; or ignored because the target is `unknown`, or `alias` is `taken` (a record's key, or already an alias). */
export type AliasResult = "aliased" | "unknown" | "taken";

/** How many of each the index holds. */
export interface JournalIndexCounts {
  readonly started: number;
  readonly settled: number;
  readonly tombstones: number;
  readonly aliases: number;
  /** Characters of the stored responses (text, image data, error strings). */
  readonly responseChars: number;
}

interface Slot {
  entry: JournalEntry;
  writtenAt: number;
  chars: number;
  aliases: string[];
}

/** A {@link JournalRetention} with every default filled in; throws `INVALID_OPTIONS` for a bound that is not a non-negative number. */
export function resolveJournalRetention(retention: JournalRetention = {}): Readonly<Required<JournalRetention>> {
  const resolved = { ...DEFAULT_JOURNAL_RETENTION };
  for (const name of ["retentionMs", "tombstoneRetentionMs", "maxEntries", "maxResponseChars", "maxTombstones"] as const) {
    const value = retention[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
      throw new ToolrelayError("INVALID_OPTIONS", `journal retention: ${name} must be a non-negative number (got ${String(value)})`);
    }
    resolved[name] = value;
  }
  if (retention.storeInputs !== undefined) resolved.storeInputs = retention.storeInputs === true;
  return Object.freeze(resolved);
}

/** Characters a response costs against `maxResponseChars`: its text and image data, or its error string. */
export function responseChars(response: ToolCallResponseBody | undefined): number {
  if (response === undefined) return 0;
  if ("error" in response) return response.error.length;
  let chars = 0;
  for (const block of response.result.content) chars += block.type === "text" ? block.text.length : block.data.length;
  return chars;
}

/** A journal's records, aliases and tombstones in memory. */
export class JournalIndex {
  readonly retention: Readonly<Required<JournalRetention>>;
  #started = new Map<string, Slot>();
  #settled = new Map<string, Slot>();
  #tombstones = new Map<string, Slot>();
  #aliases = new Map<string, string>();
  #responseChars = 0;

  /** @param retention the bounds; {@link DEFAULT_JOURNAL_RETENTION} fills what is absent. */
  constructor(retention?: JournalRetention) {
    this.retention = resolveJournalRetention(retention);
  }

  /** The entry of `key` (or of the call `key` is an alias of), tombstones included; `undefined` once it aged out. */
  find(key: string, now: number): JournalEntry | undefined {
    this.#evict(now);
    const slot = this.#slotOf(this.#aliases.get(key) ?? key);
    if (slot === undefined) return undefined;
    return this.#expireSlot(slot, now) ? this.find(key, now) : slot.entry;
  }

  /**
   * Record that `entry` started (create-if-absent): `undefined` when it was recorded, else the
   * entry already held for its key (or the call its key is an alias of; a tombstone included).
   * The index keeps `input` only when the retention says `storeInputs`.
   */
  start(entry: JournalEntry, input: unknown, now: number): JournalEntry | undefined {
    const existing = this.find(entry.key, now);
    if (existing !== undefined) return existing;
    const { response: _response, settledAt: _settledAt, input: _input, ...identity } = entry;
    const stored: JournalEntry =
      this.retention.storeInputs && input !== undefined ? { ...identity, state: "started", input } : { ...identity, state: "started" };
    this.#started.set(entry.key, { entry: stored, writtenAt: now, chars: 0, aliases: [] });
    this.#evict(now);
    return undefined;
  }

  /** The call `key` (or the call it is an alias of) settled with `response`; see {@link SettleResult} for what is ignored. */
  settle(key: string, response: ToolCallResponseBody, settledAt: number, now: number): SettleResult {
    this.#evict(now);
    const target = this.#aliases.get(key) ?? key;
    const slot = this.#started.get(target);
    if (slot === undefined || this.#expireSlot(slot, now)) {
      if (this.#settled.has(target)) return "already-settled";
      return this.#tombstones.has(target) ? "expired" : "unknown";
    }
    this.#started.delete(target);
    const chars = responseChars(response);
    this.#settled.set(target, {
      entry: { ...slot.entry, state: "settled", settledAt, response },
      writtenAt: now,
      chars,
      aliases: slot.aliases,
    });
    this.#responseChars += chars;
    this.#evict(now);
    return "settled";
  }

  /** `find(alias)` finds the call `key` (or the call `key` is itself an alias of) from now on, for as long as it is held. */
  alias(alias: string, key: string, now: number): AliasResult {
    this.#evict(now);
    const target = this.#aliases.get(key) ?? key;
    const slot = this.#slotOf(target);
    if (slot === undefined) return "unknown";
    if (alias === target || this.#aliases.has(alias) || this.#slotOf(alias) !== undefined) return "taken";
    this.#aliases.set(alias, target);
    slot.aliases.push(alias);
    return "aliased";
  }

  /** Drop the `started` record of `key` (its write failed, so the call never ran). `false` when it is not a started record. */
  forget(key: string): boolean {
    const slot = this.#started.get(key);
    if (slot === undefined) return false;
    this.#started.delete(key);
    for (const alias of slot.aliases) this.#aliases.delete(alias);
    return true;
  }

  /** Put back a tombstone (the file journal's replay of a compacted file); ignored when the key is already held. */
  restoreTombstone(entry: JournalEntry, writtenAt: number, now: number): boolean {
    this.#evict(now);
    if (this.#slotOf(entry.key) !== undefined) return false;
    this.#tombstones.set(entry.key, { entry: tombstoneOf(entry), writtenAt, chars: 0, aliases: [] });
    this.#evict(now);
    return true;
  }

  /** Age out and cap what is due at `now` (what every write and find does first). */
  evict(now: number): void {
    this.#evict(now);
  }

  /** Every tombstone, then every record, oldest write first (what a compaction writes), after evicting what is due at `now`. */
  entries(now: number): IndexedEntry[] {
    this.#evict(now);
    const live = [...this.#started.values(), ...this.#settled.values()].sort((a, b) => a.writtenAt - b.writtenAt);
    return [...this.#tombstones.values(), ...live].map(({ entry, writtenAt, aliases }) => ({ entry, writtenAt, aliases: [...aliases] }));
  }

  /** How many of each the index holds (what is due for eviction included until the next write or find). */
  counts(): JournalIndexCounts {
    return {
      started: this.#started.size,
      settled: this.#settled.size,
      tombstones: this.#tombstones.size,
      aliases: this.#aliases.size,
      responseChars: this.#responseChars,
    };
  }

  #slotOf(key: string): Slot | undefined {
    return this.#started.get(key) ?? this.#settled.get(key) ?? this.#tombstones.get(key);
  }

  /** Age out `slot` if it is due (a record becomes a tombstone, a tombstone goes); whether it did. */
  #expireSlot(slot: Slot, now: number): boolean {
    const key = slot.entry.key;
    if (slot.entry.state === "expired") {
      if (now - slot.writtenAt < this.retention.tombstoneRetentionMs) return false;
      this.#dropTombstone(key, slot);
      return true;
    }
    if (now - slot.writtenAt < this.retention.retentionMs) return false;
    this.#toTombstone(slot);
    return true;
  }

  #evict(now: number): void {
    for (const map of [this.#started, this.#settled]) {
      for (const slot of map.values()) if (!this.#expireSlot(slot, now)) break;
    }
    const { maxEntries, maxResponseChars, maxTombstones } = this.retention;
    for (const slot of this.#settled.values()) {
      if (this.#started.size + this.#settled.size <= maxEntries && this.#responseChars <= maxResponseChars) break;
      this.#toTombstone(slot);
    }
    for (const slot of this.#tombstones.values()) if (!this.#expireSlot(slot, now)) break;
    for (const [key, slot] of this.#tombstones) {
      if (this.#tombstones.size <= maxTombstones) break;
      this.#dropTombstone(key, slot);
    }
  }

  #toTombstone(slot: Slot): void {
    const key = slot.entry.key;
    if (slot.entry.state === "settled") {
      this.#settled.delete(key);
      this.#responseChars -= slot.chars;
    } else this.#started.delete(key);
    this.#tombstones.set(key, { entry: tombstoneOf(slot.entry), writtenAt: slot.writtenAt, chars: 0, aliases: slot.aliases });
  }

  #dropTombstone(key: string, slot: Slot): void {
    this.#tombstones.delete(key);
    for (const alias of slot.aliases) this.#aliases.delete(alias);
  }
}

/** An entry's tombstone: its identity and times, state `expired`, no response, no input. */
function tombstoneOf(entry: JournalEntry): JournalEntry {
  const { response: _response, input: _input, settledAt, ...identity } = entry;
  return settledAt === undefined ? { ...identity, state: "expired" } : { ...identity, state: "expired", settledAt };
}
