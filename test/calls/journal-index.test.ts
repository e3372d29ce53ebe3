/**
 * The journal index (issue 28): create-if-absent starts, settles that never create, aliases that
 * find their target and die with it, and the retention bounds — age turns records into tombstones
 * and tombstones into nothing; the count and size caps take the oldest settled records, never a
 * started one. And the memory journal over it.
 */
import { describe, expect, it } from "vitest";
import { JournalIndex, resolveJournalRetention, responseChars } from "../../packages/toolrelay/src/calls/journal-index.js";
import { MemoryCallJournal } from "../../packages/toolrelay/src/calls/memory-call-journal.js";
import { isToolrelayError } from "../../packages/toolrelay/src/errors.js";
import type { Timers } from "../../packages/toolrelay/src/internal/timers.js";
import { startedEntry } from "../support/journal-entry.js";

const entry = startedEntry;
const text = (value: string) => ({ result: { content: [{ type: "text" as const, text: value }] } });

describe("JournalIndex: start, settle, alias", () => {
  it("start creates once; a second start gets the record that is there", () => {
    const index = new JournalIndex();
    expect(index.start(entry("k1"), { amount: 5 }, 0)).toBeUndefined();
    expect(index.start({ ...entry("k1"), toolName: "other" }, {}, 1)).toMatchObject({ key: "k1", state: "started", toolName: "pay" });
    expect(index.counts()).toMatchObject({ started: 1, settled: 0 });
  });

  it("a settle without a start creates nothing and says so; a second settle keeps the first response", () => {
    const index = new JournalIndex();
    expect(index.settle("nobody", text("x"), 5, 5)).toBe("unknown");
    expect(index.find("nobody", 5)).toBeUndefined();
    index.start(entry("k1"), undefined, 0);
    expect(index.settle("k1", text("first"), 6, 6)).toBe("settled");
    expect(index.settle("k1", text("second"), 7, 7)).toBe("already-settled");
    expect(index.find("k1", 8)).toMatchObject({ state: "settled", settledAt: 6, response: text("first") });
  });

  it("find, settle and start of an alias reach the target; an alias cannot take a record's key", () => {
    const index = new JournalIndex();
    index.start(entry("k1"), undefined, 0);
    expect(index.alias("a1", "k1", 1)).toBe("aliased");
    expect(index.alias("a2", "a1", 1)).toBe("aliased");
    expect(index.alias("a1", "k1", 1)).toBe("taken");
    expect(index.alias("k1", "k1", 1)).toBe("taken");
    expect(index.alias("a3", "missing", 1)).toBe("unknown");
    expect(index.find("a2", 2)?.key).toBe("k1");
    expect(index.start(entry("a1"), undefined, 2)?.key).toBe("k1");
    expect(index.settle("a1", text("ok"), 3, 3)).toBe("settled");
    expect(index.find("k1", 3)?.state).toBe("settled");
  });

  it("keeps the input only when the retention says storeInputs", () => {
    const plain = new JournalIndex();
    plain.start({ ...entry("k1"), input: { leaked: true } }, { amount: 1 }, 0);
    expect(plain.find("k1", 0)).not.toHaveProperty("input");
    const storing = new JournalIndex({ storeInputs: true });
    storing.start(entry("k1"), { amount: 1 }, 0);
    expect(storing.find("k1", 0)?.input).toEqual({ amount: 1 });
  });

  it("forget drops a started record (its write failed) and its aliases, never a settled one", () => {
    const index = new JournalIndex();
    index.start(entry("k1"), undefined, 0);
    index.alias("a1", "k1", 0);
    expect(index.forget("k1")).toBe(true);
    expect(index.find("a1", 0)).toBeUndefined();
    index.start(entry("k2"), undefined, 0);
    index.settle("k2", text("x"), 1, 1);
    expect(index.forget("k2")).toBe(false);
  });
});

describe("JournalIndex: retention", () => {
  it("a record becomes a tombstone after retentionMs (no response, no input), and is gone after tombstoneRetentionMs", () => {
    const index = new JournalIndex({ retentionMs: 100, tombstoneRetentionMs: 500, storeInputs: true });
    index.start(entry("k1"), { amount: 1 }, 0);
    index.settle("k1", text("paid"), 10, 10);
    index.alias("a1", "k1", 20);
    expect(index.find("k1", 109)?.state).toBe("settled");
    const tombstone = index.find("a1", 110);
    expect(tombstone).toMatchObject({ key: "k1", state: "expired", startedAt: 0, settledAt: 10 });
    expect(tombstone).not.toHaveProperty("response");
    expect(tombstone).not.toHaveProperty("input");
    expect(index.settle("k1", text("late"), 111, 111)).toBe("expired");
    expect(index.start(entry("k1"), undefined, 200)?.state).toBe("expired");
    expect(index.find("k1", 509)?.state).toBe("expired");
    expect(index.find("k1", 510)).toBeUndefined();
    expect(index.find("a1", 510)).toBeUndefined();
    expect(index.counts()).toMatchObject({ started: 0, settled: 0, tombstones: 0, aliases: 0 });
  });

  it("retention measures from the last write: a settle renews the record", () => {
    const index = new JournalIndex({ retentionMs: 100 });
    index.start(entry("k1"), undefined, 0);
    index.settle("k1", text("x"), 90, 90);
    expect(index.find("k1", 150)?.state).toBe("settled");
    expect(index.find("k1", 190)?.state).toBe("expired");
  });

  it("maxEntries tombstones the oldest settled records first and never a started one", () => {
    const index = new JournalIndex({ maxEntries: 2 });
    index.start(entry("s1"), undefined, 0);
    index.start(entry("k1"), undefined, 1);
    index.settle("k1", text("1"), 2, 2);
    index.start(entry("k2"), undefined, 3);
    index.settle("k2", text("2"), 4, 4);
    expect(index.find("s1", 5)?.state).toBe("started");
    expect(index.find("k1", 5)?.state).toBe("expired");
    expect(index.find("k2", 5)?.state).toBe("settled");
    for (let number = 0; number < 5; number++) index.start(entry(`more${number}`), undefined, 6);
    expect(index.counts()).toMatchObject({ started: 6, settled: 0, tombstones: 2 });
    expect(index.find("s1", 7)?.state).toBe("started");
  });

  it("maxResponseChars counts text, image data and error strings; the oldest settled go first", () => {
    expect(responseChars({ error: "abc" })).toBe(3);
    expect(
      responseChars({
        result: {
          content: [
            { type: "text", text: "ab" },
            { type: "image", data: "xyz", mimeType: "image/png" },
          ],
        },
      }),
    ).toBe(5);
    const index = new JournalIndex({ maxResponseChars: 10 });
    for (const [number, key] of ["k1", "k2", "k3"].entries()) {
      index.start(entry(key), undefined, number);
      index.settle(key, text("12345"), number, number);
    }
    expect(index.find("k1", 9)?.state).toBe("expired");
    expect(index.counts()).toMatchObject({ settled: 2, responseChars: 10 });
  });

  it("maxTombstones drops the oldest tombstones", () => {
    const index = new JournalIndex({ maxEntries: 0, maxTombstones: 2 });
    for (const key of ["k1", "k2", "k3"]) {
      index.start(entry(key), undefined, 0);
      index.settle(key, text("x"), 1, 1);
    }
    expect(index.find("k1", 2)).toBeUndefined();
    expect(index.find("k2", 2)?.state).toBe("expired");
    expect(index.counts().tombstones).toBe(2);
  });

  it("entries lists tombstones, then records by last write, with their aliases", () => {
    const index = new JournalIndex({ maxEntries: 1 });
    index.start(entry("old"), undefined, 0);
    index.settle("old", text("x"), 1, 1);
    index.start(entry("late"), undefined, 2);
    index.start(entry("new"), undefined, 3);
    index.alias("a", "late", 4);
    expect(index.entries(5).map(({ entry: item, writtenAt, aliases }) => [item.key, item.state, writtenAt, aliases])).toEqual([
      ["old", "expired", 1, []],
      ["late", "started", 2, ["a"]],
      ["new", "started", 3, []],
    ]);
  });

  it("a bound that is not a non-negative number is INVALID_OPTIONS", () => {
    expect(resolveJournalRetention({})).toMatchObject({ retentionMs: 86_400_000, maxEntries: 100_000 });
    for (const bad of [{ retentionMs: -1 }, { maxEntries: Number.NaN }, { maxTombstones: "5" as unknown as number }]) {
      let caught: unknown;
      try {
        new JournalIndex(bad);
      } catch (error) {
        caught = error;
      }
      expect(isToolrelayError(caught, "INVALID_OPTIONS")).toBe(true);
    }
  });
});

describe("MemoryCallJournal", () => {
  it("is the index behind the CallJournal interface, on its clock; writes after close reject", async () => {
    let now = 1_000;
    const timers: Timers = { setTimeout: () => 0, clearTimeout: () => undefined, now: () => now };
    const journal = new MemoryCallJournal({ retention: { retentionMs: 50 }, timers });
    expect(journal.kind).toBe("memory");
    await expect(journal.start(entry("k1"), {})).resolves.toBeUndefined();
    await expect(journal.start(entry("k1"), {})).resolves.toMatchObject({ key: "k1" });
    await journal.alias("a1", "k1");
    await journal.settle("k1", text("ok"), 1_001);
    expect(journal.find("a1")).toMatchObject({ state: "settled", response: text("ok") });
    now = 1_100;
    expect(journal.find("k1")?.state).toBe("expired");
    await journal.close();
    await journal.close();
    await expect(journal.start(entry("k2"), {})).rejects.toMatchObject({ code: "ABORTED" });
    await expect(journal.settle("k1", text("x"), 1)).rejects.toMatchObject({ code: "ABORTED" });
    await expect(journal.alias("a2", "k1")).rejects.toMatchObject({ code: "ABORTED" });
  });
});
