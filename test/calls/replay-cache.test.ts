import { describe, expect, it } from "vitest";
import {
  DEFAULT_REPLAY_MAX_AGE_MS,
  DEFAULT_REPLAY_MAX_ENTRIES,
  DEFAULT_REPLAY_MAX_TOMBSTONES,
  DEFAULT_REPLAY_TOMBSTONE_AGE_MS,
  ReplayCache,
  type ReplayEntry,
} from "../../src/calls/index.js";

function clock(start = 0): { now: () => number; advance(ms: number): void } {
  let time = start;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

function entry(keyId: string, settledAt: number): ReplayEntry {
  return {
    keyId,
    outcome: { kind: "ok", content: [] },
    response: { result: { content: [] } },
    settledAt,
    deliveries: new Map(),
  };
}

describe("ReplayCache", () => {
  it("has the documented defaults", () => {
    const cache = new ReplayCache();
    expect(cache.maxEntries).toBe(DEFAULT_REPLAY_MAX_ENTRIES);
    expect(DEFAULT_REPLAY_MAX_ENTRIES).toBe(1_024);
    expect(cache.maxAgeMs).toBe(DEFAULT_REPLAY_MAX_AGE_MS);
    expect(DEFAULT_REPLAY_MAX_AGE_MS).toBe(600_000);
    expect(cache.maxTombstones).toBe(DEFAULT_REPLAY_MAX_TOMBSTONES);
    expect(DEFAULT_REPLAY_MAX_TOMBSTONES).toBe(65_536);
    expect(cache.tombstoneAgeMs).toBe(DEFAULT_REPLAY_TOMBSTONE_AGE_MS);
    expect(DEFAULT_REPLAY_TOMBSTONE_AGE_MS).toBe(86_400_000);
  });

  it("returns the very entry it was given", () => {
    const cache = new ReplayCache({}, clock().now);
    const stored = entry("a", 0);
    cache.set(stored);
    const found = cache.lookup("a");
    expect(found.kind).toBe("hit");
    if (found.kind === "hit") expect(found.entry).toBe(stored);
    expect(cache.lookup("b")).toEqual({ kind: "miss" });
  });

  it("keeps exactly maxEntries (default 1,024) and tombstones the oldest on the next insert", () => {
    const time = clock();
    const cache = new ReplayCache({}, time.now);
    for (let index = 0; index < 1_024; index++) cache.set(entry(`k${index}`, time.now()));
    expect(cache.size).toBe(1_024);
    expect(cache.tombstoneCount).toBe(0);
    expect(cache.lookup("k0").kind).toBe("hit");
    cache.set(entry("k1024", time.now()));
    expect(cache.size).toBe(1_024);
    expect(cache.lookup("k0")).toMatchObject({ kind: "expired" });
    expect(cache.lookup("k1").kind).toBe("hit");
    expect(cache.lookup("k1024").kind).toBe("hit");
    expect(cache.tombstoneCount).toBe(1);
  });

  it("evicts by age exactly at maxAgeMs (default 10 min), lazily on access", () => {
    const time = clock(1_000);
    const cache = new ReplayCache({}, time.now);
    cache.set(entry("a", time.now()));
    time.advance(600_000 - 1);
    expect(cache.lookup("a").kind).toBe("hit");
    time.advance(1);
    expect(cache.lookup("a")).toMatchObject({ kind: "expired" });
    expect(cache.size).toBe(0);
  });

  it("evicts by age on insert too", () => {
    const time = clock();
    const cache = new ReplayCache({ maxAgeMs: 10 }, time.now);
    cache.set(entry("old", time.now()));
    time.advance(10);
    cache.set(entry("new", time.now()));
    expect(cache.entries().map((stored) => stored.keyId)).toEqual(["new"]);
    expect(cache.tombstoneCount).toBe(1);
  });

  it("keeps exactly maxTombstones and forgets the oldest past it", () => {
    const time = clock();
    const cache = new ReplayCache({ maxEntries: 1, maxTombstones: 3 }, time.now);
    for (const keyId of ["a", "b", "c", "d"]) cache.set(entry(keyId, time.now()));
    // a, b, c evicted to tombstones; d cached.
    expect(cache.tombstoneCount).toBe(3);
    expect(cache.lookup("a")).toMatchObject({ kind: "expired" });
    cache.set(entry("e", time.now())); // d → tombstone; a forgotten
    expect(cache.tombstoneCount).toBe(3);
    expect(cache.lookup("a")).toEqual({ kind: "miss" });
    expect(cache.lookup("b")).toMatchObject({ kind: "expired" });
    expect(cache.lookup("d")).toMatchObject({ kind: "expired" });
  });

  it("holds the default 65,536 tombstones at the cap", () => {
    const time = clock();
    const cache = new ReplayCache({ maxEntries: 1 }, time.now);
    for (let index = 0; index <= 65_536; index++) cache.set(entry(`k${index}`, time.now()));
    expect(cache.size).toBe(1);
    expect(cache.tombstoneCount).toBe(65_536);
    expect(cache.lookup("k0")).toMatchObject({ kind: "expired" });
    cache.set(entry("one-more", time.now()));
    expect(cache.tombstoneCount).toBe(65_536);
    expect(cache.lookup("k0")).toEqual({ kind: "miss" });
    expect(cache.lookup("k1")).toMatchObject({ kind: "expired" });
  });

  it("forgets a tombstone exactly tombstoneAgeMs (default 24 h) after its call settled", () => {
    const time = clock();
    const cache = new ReplayCache({ maxAgeMs: 1_000 }, time.now);
    cache.set(entry("a", time.now()));
    time.advance(1_000);
    expect(cache.lookup("a")).toMatchObject({ kind: "expired" });
    time.advance(86_400_000 - 1_000 - 1);
    expect(cache.lookup("a")).toMatchObject({ kind: "expired" });
    time.advance(1);
    expect(cache.lookup("a")).toEqual({ kind: "miss" });
    expect(cache.tombstoneCount).toBe(0);
  });

  it("a tombstone keeps the request ids whose response was written", () => {
    const cache = new ReplayCache({ maxEntries: 1 }, clock().now);
    const first = entry("a", 0);
    first.deliveries.set("r1", "sent");
    first.deliveries.set("r2", "held");
    first.deliveries.set("r3", "dropped");
    first.deliveries.set("r4", "sent");
    cache.set(first);
    cache.set(entry("b", 0));
    expect(cache.lookup("a")).toEqual({ kind: "expired", sentRequestIds: ["r1", "r4"] });
  });

  it("bounds the request ids kept in all tombstones together by maxTombstones", () => {
    const cache = new ReplayCache({ maxEntries: 1, maxTombstones: 4 }, clock().now);
    for (const keyId of ["a", "b", "c"]) {
      const stored = entry(keyId, 0);
      stored.deliveries.set(`${keyId}-1`, "sent");
      stored.deliveries.set(`${keyId}-2`, "sent");
      cache.set(stored);
    }
    cache.set(entry("d", 0)); // a, b, c → tombstones holding 6 ids > 4: a is forgotten
    expect(cache.lookup("a")).toEqual({ kind: "miss" });
    expect(cache.lookup("b")).toEqual({ kind: "expired", sentRequestIds: ["b-1", "b-2"] });
    expect(cache.lookup("c")).toEqual({ kind: "expired", sentRequestIds: ["c-1", "c-2"] });
    expect(cache.tombstoneCount).toBe(2);
    cache.set(entry("e", 0)); // d (no ids) → tombstone: 3 tombstones, 4 ids: within both caps
    expect(cache.tombstoneCount).toBe(3);
  });

  it("remembers request ids answered 'expired' in the tombstone, within the caps", () => {
    const cache = new ReplayCache({ maxEntries: 1, maxTombstones: 3 }, clock().now);
    cache.set(entry("a", 0));
    cache.set(entry("b", 0));
    cache.noteExpiredAnswer("a", "x1");
    cache.noteExpiredAnswer("a", "x1");
    cache.noteExpiredAnswer("missing", "x9");
    expect(cache.lookup("a")).toEqual({ kind: "expired", sentRequestIds: ["x1"] });
    cache.noteExpiredAnswer("a", "x2");
    cache.noteExpiredAnswer("a", "x3");
    cache.noteExpiredAnswer("a", "x4"); // 4 ids > 3: the tombstone goes
    expect(cache.lookup("a")).toEqual({ kind: "miss" });
  });

  it("keeps no tombstones with maxTombstones 0", () => {
    const cache = new ReplayCache({ maxEntries: 1, maxTombstones: 0 }, clock().now);
    cache.set(entry("a", 0));
    cache.set(entry("b", 0));
    expect(cache.lookup("a")).toEqual({ kind: "miss" });
    expect(cache.tombstoneCount).toBe(0);
  });

  it("re-setting a key replaces it and clears its tombstone", () => {
    const cache = new ReplayCache({ maxEntries: 1 }, clock().now);
    cache.set(entry("a", 0));
    cache.set(entry("b", 0));
    expect(cache.lookup("a")).toMatchObject({ kind: "expired" });
    const again = entry("a", 0);
    cache.set(again);
    expect(cache.lookup("a")).toEqual({ kind: "hit", entry: again });
  });

  it("clear forgets entries and tombstones", () => {
    const cache = new ReplayCache({ maxEntries: 1 }, clock().now);
    cache.set(entry("a", 0));
    cache.set(entry("b", 0));
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.tombstoneCount).toBe(0);
    expect(cache.lookup("a")).toEqual({ kind: "miss" });
  });

  it.each([
    [{ maxEntries: 0 }],
    [{ maxEntries: 1.5 }],
    [{ maxAgeMs: 0 }],
    [{ maxAgeMs: Number.POSITIVE_INFINITY }],
    [{ maxTombstones: -1 }],
    [{ tombstoneAgeMs: Number.NaN }],
  ])("refuses %o with INVALID_OPTIONS", (options) => {
    expect(() => new ReplayCache(options)).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });
});
