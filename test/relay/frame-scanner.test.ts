import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FrameScanner, MAX_FRAME_DEPTH, scanFrame } from "../../packages/relay/src/frame-scanner.js";
import { RelayFrame } from "../../packages/relay/src/relay-frame.js";

const SEED = Number(process.env.TOOLRELAY_SCANNER_SEED ?? 20_251);

/** Every top-level field as the scanner reads it, as sorted [name, value] pairs (a `__proto__` name stays a name). */
function fieldsOf(text: string): Array<[string, unknown]> | undefined {
  const data = Buffer.from(text, "utf8");
  const scan = scanFrame(data);
  if (!scan.ok) return undefined;
  const entries: Array<[string, unknown]> = [];
  for (const [name, span] of scan.fields) entries.push([name, JSON.parse(data.toString("utf8", span.start, span.end))]);
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function sortedEntries(object: Record<string, unknown>): Array<[string, unknown]> {
  return Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

describe("FrameScanner", () => {
  it("agrees with JSON.parse on every top-level field of generated objects (keys and strings of any Unicode, escapes, whitespace)", () => {
    const objects = fc.dictionary(fc.string({ unit: "binary" }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 8 });
    fc.assert(
      fc.property(objects, fc.boolean(), (object, pretty) => {
        const text = pretty ? JSON.stringify(object, null, 2) : JSON.stringify(object);
        const parsed = JSON.parse(text) as Record<string, unknown>;
        expect(fieldsOf(text)).toEqual(sortedEntries(parsed));
        const typed = JSON.stringify({ ...parsed, type: "t" }, null, pretty ? 1 : undefined);
        const frame = RelayFrame.read(typed)!;
        for (const [name, value] of Object.entries(JSON.parse(typed) as Record<string, unknown>)) expect(frame.field(name)).toEqual(value);
        const scan = scanFrame(Buffer.from(text));
        expect(scan.ok && Buffer.from(text)[scan.closeAt]).toBe(0x7d);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it("gives the same result whatever the slice budget (resumable at every byte)", () => {
    const objects = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
    fc.assert(
      fc.property(objects, fc.integer({ min: 1, max: 64 }), (object, budget) => {
        const data = Buffer.from(JSON.stringify({ type: "x", ...object, tail: 'a\\"b'.repeat(50) }));
        const scanner = new FrameScanner(data);
        let steps = 0;
        while (!scanner.done) {
          scanner.step(budget);
          steps++;
          if (steps > data.length * 4 + 16) throw new Error("the scanner made no progress");
        }
        const whole = scanFrame(data);
        const sliced = scanner.result();
        expect(sliced).toEqual(whole);
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it("never throws on arbitrary bytes, and accepts only what has the shape of one JSON object", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const scan = scanFrame(Buffer.from(bytes));
        if (scan.ok) expect(Buffer.from(bytes).toString("latin1").trimStart().startsWith("{")).toBe(true);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it.each([
    ["an array", "[1,2]", "not a JSON object"],
    ["a string", '"x"', "not a JSON object"],
    ["empty input", "", "not a JSON object"],
    ["a trailing comma", '{"a":1,}', "expected a field name"],
    ["a missing colon", '{"a" 1}', "expected ':'"],
    ["two objects", '{"a":1}{"b":2}', "data after the closing brace"],
    ["an unterminated string", '{"a":"abc', "unterminated string"],
    ["an unterminated value", '{"a":[1,2', "unterminated value"],
    ["mismatched brackets", '{"a":[1}', "mismatched bracket"],
    ["a missing value", '{"a":}', "expected a value"],
    ["an escaped closing quote", '{"a":"x\\"}', "unterminated string"],
  ])("refuses %s", (_name, text, error) => {
    expect(scanFrame(Buffer.from(text))).toEqual({ ok: false, error: expect.stringContaining(error) });
  });

  it(`refuses a document nested deeper than ${MAX_FRAME_DEPTH} levels and accepts exactly ${MAX_FRAME_DEPTH}`, () => {
    const nested = (levels: number) => `{"type":"x","a":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
    expect(scanFrame(Buffer.from(nested(MAX_FRAME_DEPTH))).ok).toBe(true);
    expect(scanFrame(Buffer.from(nested(MAX_FRAME_DEPTH + 1)))).toEqual({ ok: false, error: expect.stringContaining("nested deeper") });
  });

  it("scans a 16 MiB frame in bounded slices: most of a long string is skipped natively, an object-heavy value byte by byte", () => {
    const longString = Buffer.from(JSON.stringify({ type: "stream_delta", request_id: "r", pad: "x".repeat(16 * 1024 * 1024) }));
    const scanner = new FrameScanner(longString);
    let slices = 0;
    while (!scanner.done) {
      expect(scanner.step(16 * 1024)).toBeLessThanOrEqual(16 * 1024 + 1);
      slices++;
    }
    expect(scanner.result().ok).toBe(true);
    // 16 MiB at 16 bytes per unit of budget: 64 slices of 16 Ki units.
    expect(slices).toBeGreaterThanOrEqual(60);
    expect(slices).toBeLessThanOrEqual(80);
    expect(RelayFrame.from(longString, scanner.result())?.requestId).toBe("r");
    const objects = Buffer.from(JSON.stringify({ type: "x", items: Array.from({ length: 20_000 }, (_, index) => ({ index })) }));
    const heavy = new FrameScanner(objects);
    let heavySlices = 0;
    while (!heavy.done) {
      heavy.step(16 * 1024);
      heavySlices++;
    }
    expect(heavy.result().ok).toBe(true);
    expect(heavySlices).toBeGreaterThan(objects.length / (16 * 1024 * 16));
  });
});
