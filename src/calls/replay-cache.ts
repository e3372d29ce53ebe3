/**
 * The replay cache: the settled outcome of every recent call, by call key, so
 * that a duplicate request gets the same response instead of a second
 * execution. Bounded in count and age; an evicted key leaves a tombstone (also
 * bounded), so a duplicate that arrives later is still recognised and told
 * "outcome unknown" rather than run again. A tombstone also keeps the request
 * ids whose response was written, so that the same request id arriving again
 * gets no second frame. Age is checked lazily, on every access and insert: the
 * cache owns no timer.
 */
import { ToolrelayError } from "../errors.js";
import type { CallOutcome } from "./call-outcome.js";
import { FifoMap } from "./fifo-map.js";
import type { ToolCallResponseBody } from "./outcome-shapes.js";

/** Default number of cached outcomes: 1,024. */
export const DEFAULT_REPLAY_MAX_ENTRIES = 1_024;
/** Default age of a cached outcome: 10 minutes. */
export const DEFAULT_REPLAY_MAX_AGE_MS = 10 * 60_000;
/** Default number of tombstones (keys of evicted outcomes): 65,536. */
export const DEFAULT_REPLAY_MAX_TOMBSTONES = 65_536;
/** Default age of a tombstone, counted from the call's settlement: 24 hours. */
export const DEFAULT_REPLAY_TOMBSTONE_AGE_MS = 24 * 60 * 60_000;

export interface ReplayCacheOptions {
  /** Most cached outcomes; the oldest is evicted to a tombstone first. Default 1,024. */
  maxEntries?: number;
  /** An outcome is evicted once it is this old (ms since settlement). Default 600_000 (10 min). */
  maxAgeMs?: number;
  /**
   * Most tombstones, and most request ids kept in all tombstones together; the
   * oldest tombstone is forgotten first when either is exceeded. Default 65,536. `0` keeps none.
   */
  maxTombstones?: number;
  /** A tombstone is forgotten once its call settled this long ago (ms). Default 86_400_000 (24 h). */
  tombstoneAgeMs?: number;
}

/**
 * What happened to the response for one request id: its frame was written
 * (`sent`), it waits for the link (`held`), or it was given up (`dropped`: the
 * runtime that asked is gone).
 */
export type DeliveryState = "sent" | "held" | "dropped";

/** One settled call. */
export interface ReplayEntry {
  readonly keyId: string;
  readonly outcome: CallOutcome;
  /** The response, built once; replays deliver this very object. */
  readonly response: ToolCallResponseBody;
  /** `Timers.now()` when the call settled. */
  readonly settledAt: number;
  /** Every request id answered with this entry, and its delivery state. */
  readonly deliveries: Map<string, DeliveryState>;
}

export type ReplayLookup =
  | { kind: "hit"; entry: ReplayEntry }
  /** Evicted: the call ran; `sentRequestIds` were answered with its (now forgotten) response. */
  | { kind: "expired"; sentRequestIds: readonly string[] }
  | { kind: "miss" };

interface Tombstone {
  readonly settledAt: number;
  readonly sentRequestIds: string[];
}

/** Most request ids one tombstone keeps (the oldest is forgotten first). */
const MAX_TOMBSTONE_REQUEST_IDS = 64;

export class ReplayCache {
  readonly maxEntries: number;
  readonly maxAgeMs: number;
  readonly maxTombstones: number;
  readonly tombstoneAgeMs: number;
  #now: () => number;
  /** In insertion (= settlement) order, oldest first. */
  #entries = new FifoMap<ReplayEntry>();
  /** keyId → the evicted call, oldest first. */
  #tombstones = new FifoMap<Tombstone>();
  /** Evicted entries whose response is still held for a request (delivered when the link returns). */
  #heldEvicted = new Set<ReplayEntry>();
  /** Request ids kept in all tombstones together. */
  #tombstoneRequestIds = 0;

  constructor(options: ReplayCacheOptions = {}, now: () => number = Date.now) {
    this.maxEntries = checkCount("maxEntries", options.maxEntries ?? DEFAULT_REPLAY_MAX_ENTRIES, 1);
    this.maxAgeMs = checkCount("maxAgeMs", options.maxAgeMs ?? DEFAULT_REPLAY_MAX_AGE_MS, 1);
    this.maxTombstones = checkCount("maxTombstones", options.maxTombstones ?? DEFAULT_REPLAY_MAX_TOMBSTONES, 0);
    this.tombstoneAgeMs = checkCount("tombstoneAgeMs", options.tombstoneAgeMs ?? DEFAULT_REPLAY_TOMBSTONE_AGE_MS, 1);
    this.#now = now;
  }

  /** Cached outcomes (after dropping the expired ones). */
  get size(): number {
    this.#purge();
    return this.#entries.size;
  }

  /** Tombstones (after dropping the expired ones). */
  get tombstoneCount(): number {
    this.#purge();
    return this.#tombstones.size;
  }

  /** The cached entry for `keyId`, or whether the key is only remembered as evicted. */
  lookup(keyId: string): ReplayLookup {
    this.#purge();
    const entry = this.#entries.get(keyId);
    if (entry !== undefined) return { kind: "hit", entry };
    const tombstone = this.#tombstones.get(keyId);
    if (tombstone === undefined) return { kind: "miss" };
    if (this.#now() - tombstone.settledAt >= this.tombstoneAgeMs) {
      this.#forget(keyId);
      return { kind: "miss" };
    }
    return { kind: "expired", sentRequestIds: tombstone.sentRequestIds };
  }

  /** Cache a settled call (the newest); evicts the oldest entries past `maxEntries`. */
  set(entry: ReplayEntry): void {
    this.#purge();
    this.#entries.delete(entry.keyId);
    this.#forget(entry.keyId);
    this.#entries.set(entry.keyId, entry);
    while (this.#entries.size > this.maxEntries) this.#evict(this.#entries.oldest()![1]);
  }

  /** Every cached entry, oldest first (a snapshot: safe to change the cache while iterating). */
  entries(): ReplayEntry[] {
    this.#purge();
    return [...this.#entries.values()];
  }

  /** The "expired" answer was written for `requestId`: remember it in the key's tombstone (no second frame). */
  noteExpiredAnswer(keyId: string, requestId: string): void {
    const tombstone = this.#tombstones.get(keyId);
    if (tombstone === undefined || tombstone.sentRequestIds.includes(requestId)) return;
    tombstone.sentRequestIds.push(requestId);
    this.#tombstoneRequestIds++;
    if (tombstone.sentRequestIds.length > MAX_TOMBSTONE_REQUEST_IDS) {
      tombstone.sentRequestIds.shift();
      this.#tombstoneRequestIds--;
    }
    this.#trimTombstones();
  }

  /** Every response still waiting for the link, as `[entry, requestId]`, oldest entry first (a snapshot). */
  held(): Array<[ReplayEntry, string]> {
    const held: Array<[ReplayEntry, string]> = [];
    // Evicted entries first (they are older); those with nothing held any more are let go.
    const live = this.entries(); // may purge by age, moving entries into #heldEvicted
    for (const entry of [...this.#heldEvicted]) {
      if (!hasHeld(entry)) this.#heldEvicted.delete(entry);
    }
    for (const entry of [...this.#heldEvicted, ...live]) {
      for (const [requestId, state] of entry.deliveries) if (state === "held") held.push([entry, requestId]);
    }
    return held;
  }

  /** Forget everything, tombstones included. */
  clear(): void {
    this.#entries.clear();
    this.#heldEvicted.clear();
    this.#tombstones.clear();
    this.#tombstoneRequestIds = 0;
  }

  #purge(): void {
    const now = this.#now();
    for (let oldest = this.#entries.oldest(); oldest !== undefined; oldest = this.#entries.oldest()) {
      if (now - oldest[1].settledAt < this.maxAgeMs) break;
      this.#evict(oldest[1]);
    }
    for (let oldest = this.#tombstones.oldest(); oldest !== undefined; oldest = this.#tombstones.oldest()) {
      if (now - oldest[1].settledAt < this.tombstoneAgeMs) break;
      this.#forget(oldest[0]);
    }
  }

  #evict(entry: ReplayEntry): void {
    this.#entries.delete(entry.keyId);
    if (hasHeld(entry)) {
      // Its response is still owed to a request (the link is down): keep the entry for delivery,
      // outside the cache (no replay from it), bounded like the tombstones.
      this.#heldEvicted.add(entry);
      while (this.#heldEvicted.size > Math.max(this.maxTombstones, this.maxEntries)) {
        this.#heldEvicted.delete(this.#heldEvicted.values().next().value as ReplayEntry);
      }
    }
    if (this.maxTombstones === 0 || this.#now() - entry.settledAt >= this.tombstoneAgeMs) return;
    const sentRequestIds: string[] = [];
    for (const [requestId, state] of entry.deliveries) if (state === "sent") sentRequestIds.push(requestId);
    this.#tombstones.set(entry.keyId, { settledAt: entry.settledAt, sentRequestIds });
    this.#tombstoneRequestIds += sentRequestIds.length;
    this.#trimTombstones();
  }

  #trimTombstones(): void {
    while (this.#tombstones.size > this.maxTombstones || this.#tombstoneRequestIds > this.maxTombstones) {
      this.#forget(this.#tombstones.oldest()![0]);
    }
  }

  #forget(keyId: string): void {
    const tombstone = this.#tombstones.get(keyId);
    if (tombstone === undefined) return;
    this.#tombstones.delete(keyId);
    this.#tombstoneRequestIds -= tombstone.sentRequestIds.length;
  }
}

function hasHeld(entry: ReplayEntry): boolean {
  for (const state of entry.deliveries.values()) if (state === "held") return true;
  return false;
}

function checkCount(name: string, value: number, minimum: number): number {
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new ToolrelayError("INVALID_OPTIONS", `replay.${name} must be an integer >= ${minimum} (got ${String(value)})`);
  }
  return value;
}
