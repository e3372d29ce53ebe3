/**
 * The lines of the file journal: `<crc32> <json>\n`, decoded without ever throwing. A property:
 * any byte-level corruption and truncation of a valid journal file opens without throwing (the
 * line splitter and replay in memory, and the real open on a real file) and keeps every record
 * whose lines were not touched.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { Timers } from "../../packages/toolrelay/src/internal/timers.js";
import { JournalIndex } from "../../packages/toolrelay/src/calls/journal-index.js";
import { openFileCallJournal } from "../../packages/toolrelay/src/journal/index.js";
import { headerLine, replayJournal } from "../../packages/toolrelay/src/journal/journal-compaction.js";
import {
  decodeJournalLine,
  encodeJournalLine,
  splitJournal,
  type JournalLine,
} from "../../packages/toolrelay/src/journal/journal-lines.js";

const identity = (key: string) => ({
  key,
  toolName: "pay",
  agentId: "a",
  conversationId: "c",
  toolCallId: `call_${key}`,
  inputSha256: "sha",
  startedAt: 1,
});
const lineText = (line: JournalLine) => {
  const encoded = encodeJournalLine(line);
  if (!encoded.ok) throw new Error(encoded.reason);
  return encoded.text;
};
const bytesOf = (text: string) => Buffer.from(text.replace(/\n$/, ""), "utf8");

describe("journal lines", () => {
  it("every kind encodes and decodes back; the CRC covers the JSON's UTF-8", () => {
    const lines: JournalLine[] = [
      { kind: "header", format: "toolrelay-call-journal", version: 1, createdAt: 5 },
      { kind: "start", at: 1, entry: { ...identity("k1"), input: { note: "é ✓ \u2028" } } },
      {
        kind: "settle",
        at: 2,
        key: "k1",
        settledAt: 2,
        response: { result: { content: [{ type: "image", data: "AA==", mimeType: "image/png" }], is_error: false } },
      },
      { kind: "settle", at: 2, key: "k2", settledAt: 2, response: { error: "boom\nnext" } },
      { kind: "alias", at: 3, alias: "a1", key: "k1" },
      { kind: "tombstone", at: 4, entry: { ...identity("k3"), settledAt: 3 } },
    ];
    for (const line of lines) {
      const text = lineText(line);
      expect(text).toMatch(/^[0-9a-f]{8} \{.*\}\n$/s);
      expect(text.slice(0, -1)).not.toContain("\n");
      expect(decodeJournalLine(bytesOf(text))).toEqual({ ok: true, line });
    }
  });

  it("keeps the response's key order as written (the model's bytes)", () => {
    const text = lineText({
      kind: "settle",
      at: 2,
      key: "k1",
      settledAt: 2,
      response: { result: { content: [{ mimeType: "image/png", data: "AA==", type: "image" } as never] } },
    });
    const decoded = decodeJournalLine(bytesOf(text));
    expect(decoded.ok && JSON.stringify(decoded.line)).toBe(text.slice(9, -1));
  });

  it("drops, with a reason, a bad CRC, bad JSON, an unknown kind, a bad shape, a short line", () => {
    const good = lineText({ kind: "alias", at: 3, alias: "a1", key: "k1" });
    const withCrc = (json: string) => `${crc32(Buffer.from(json, "utf8")).toString(16).padStart(8, "0")} ${json}\n`;
    const cases: Array<[string, RegExp]> = [
      [`${good.slice(0, 9)}${good.slice(9).replace("a1", "a2")}`, /CRC mismatch/],
      [withCrc("{not json"), /invalid JSON/],
      [withCrc('{"kind":"launch","at":1}'), /unknown line kind "launch"/],
      [withCrc('{"kind":"alias","at":1,"alias":"a"}'), /bad alias line: key/],
      [withCrc('{"kind":"settle","at":1,"key":"k","settledAt":1,"response":{"result":{"content":"x"}}}'), /bad settle line/],
      [withCrc('{"kind":"alias","at":1,"alias":"a","key":"k","extra":1}'), /bad alias line/],
      ["zzzzzzzz {}", /bad CRC prefix/],
      ["short", /no CRC prefix/],
    ];
    for (const [text, reason] of cases) {
      const decoded = decodeJournalLine(bytesOf(text));
      expect(decoded.ok).toBe(false);
      expect(decoded.ok ? "" : decoded.reason).toMatch(reason);
    }
  });

  it("a value JSON cannot carry is refused by encode, not thrown", () => {
    const encoded = encodeJournalLine({ kind: "start", at: 1, entry: { ...identity("k"), input: { big: 1n } } });
    expect(encoded).toMatchObject({ ok: false, reason: expect.stringMatching(/not JSON/) });
  });

  it("splitJournal numbers lines, drops bad ones and reports a truncated tail", () => {
    const text =
      headerLine(1) +
      lineText({ kind: "start", at: 1, entry: identity("k1") }) +
      "garbage\n" +
      lineText({ kind: "start", at: 1, entry: identity("k2") }).slice(0, 20);
    const split = splitJournal(Buffer.from(text));
    expect(split.lines.map(({ number, line }) => [number, line.kind])).toEqual([
      [1, "header"],
      [2, "start"],
    ]);
    expect(split.dropped).toEqual([
      { line: 3, reason: expect.stringMatching(/CRC prefix/) },
      { line: 4, reason: "truncated last line (20 bytes, no newline)" },
    ]);
    expect(split).toMatchObject({ lineCount: 3, truncatedBytes: 20, keptBytes: Buffer.byteLength(text) - 20 });
  });
});

/** A valid journal file of `count` calls (some settled, some aliased), with each line's byte range and what it says. */
function validJournal(count: number, settledMask: number, aliasMask: number) {
  const parts: Array<{ text: string; kind: "header" | "start" | "settle" | "alias"; key: string }> = [
    { text: headerLine(1), kind: "header", key: "" },
  ];
  for (let number = 0; number < count; number++) {
    const key = `tr1_${number}`;
    parts.push({
      text: lineText({ kind: "start", at: 1 + number, entry: { ...identity(key), input: { seat: number } } }),
      kind: "start",
      key,
    });
    if ((settledMask >> number) & 1) {
      parts.push({
        text: lineText({
          kind: "settle",
          at: 2 + number,
          key,
          settledAt: 2,
          response: { result: { content: [{ type: "text", text: `paid ${number} ✓` }] } },
        }),
        kind: "settle",
        key,
      });
    }
    if ((aliasMask >> number) & 1)
      parts.push({ text: lineText({ kind: "alias", at: 3 + number, alias: `alias_${number}`, key }), kind: "alias", key });
  }
  let offset = 0;
  const lines = parts.map((part) => {
    const start = offset;
    offset += Buffer.byteLength(part.text);
    return { ...part, start, end: offset };
  });
  return { bytes: Buffer.from(parts.map((part) => part.text).join("")), lines };
}

const corruption = fc.record({
  count: fc.integer({ min: 1, max: 12 }),
  settledMask: fc.integer({ min: 0, max: 4095 }),
  aliasMask: fc.integer({ min: 0, max: 4095 }),
  flips: fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), fc.integer({ min: 0, max: 255 })), {
    maxLength: 6,
  }),
  cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
});

/** Apply the corruption; what each call must still be found as (only calls whose lines are untouched). */
function corrupt({ count, settledMask, aliasMask, flips, cut }: typeof corruption extends fc.Arbitrary<infer T> ? T : never) {
  const { bytes, lines } = validJournal(count, settledMask, aliasMask);
  const damaged = Buffer.from(bytes);
  for (const [where, value] of flips) damaged[Math.floor(where * damaged.length)] = value;
  const length = cut === undefined ? damaged.length : Math.floor(cut * damaged.length);
  const file = damaged.subarray(0, length);
  // A line is untouched when its bytes, its newline and the newline before it are all there and unchanged.
  const untouched = (line: (typeof lines)[number]) =>
    line.end <= length &&
    damaged.subarray(Math.max(0, line.start - 1), line.end).equals(bytes.subarray(Math.max(0, line.start - 1), line.end));
  const expected: Array<{ key: string; settled: boolean; alias: string | undefined }> = [];
  for (const start of lines.filter((line) => line.kind === "start" && untouched(line))) {
    const settle = lines.find((line) => line.kind === "settle" && line.key === start.key);
    const alias = lines.find((line) => line.kind === "alias" && line.key === start.key);
    expected.push({
      key: start.key,
      settled: settle !== undefined && untouched(settle),
      alias: alias !== undefined && untouched(alias) ? `alias_${start.key.slice(4)}` : undefined,
    });
  }
  return { file, expected };
}

describe("journal lines: corruption and truncation (property)", () => {
  it("in memory: any damage splits and replays without throwing, keeping every untouched record", () => {
    fc.assert(
      fc.property(corruption, (input) => {
        const { file, expected } = corrupt(input);
        const index = new JournalIndex();
        replayJournal(splitJournal(file), index);
        for (const { key, settled, alias } of expected) {
          const found = index.find(key, 100);
          expect(found?.state).toBe(settled ? "settled" : "started");
          if (settled) expect(found?.response).toEqual({ result: { content: [{ type: "text", text: `paid ${key.slice(4)} ✓` }] } });
          if (alias !== undefined) expect(index.find(alias, 100)?.key).toBe(key);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  const folder = mkdtempSync(join(tmpdir(), "journal-lines-"));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  let run = 0;
  // The lines were written at t = 1..40 (epoch ms): the journal's clock must be near them, or the records aged out.
  const timers: Timers = { setTimeout: () => 0, clearTimeout: () => undefined, now: () => 100 };

  it("on a real file: the open never rejects, reports what it dropped, and keeps every untouched record", async () => {
    await fc.assert(
      fc.asyncProperty(corruption, async (input) => {
        const { file, expected } = corrupt(input);
        const path = join(folder, `run-${run++}.journal`);
        writeFileSync(path, file, { mode: 0o600 });
        const journal = await openFileCallJournal({ path, fsync: false, timers });
        try {
          for (const { key, settled } of expected) expect(journal.find(key)?.state).toBe(settled ? "settled" : "started");
          expect(journal.recovery.droppedCount).toBeGreaterThanOrEqual(journal.recovery.dropped.length);
          await journal.start({ ...identity("after"), state: "started" }, {});
        } finally {
          await journal.close();
        }
        const again = await openFileCallJournal({ path, fsync: false, timers });
        try {
          expect(again.find("after")?.state).toBe("started");
          expect(again.recovery.truncatedBytes).toBe(0);
        } finally {
          await again.close();
        }
      }),
      { numRuns: 60 },
    );
  });
});
