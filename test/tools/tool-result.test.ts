import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { errorResult, normalizeToolResult, textResult } from "../../packages/toolrelay/src/tools/index.js";
import { wireContentBlockSchema } from "../../packages/toolrelay/src/wire/index.js";

const image = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" } as const;

describe("normalizeToolResult", () => {
  it("sends a string as one text block", () => {
    expect(normalizeToolResult("sunny")).toEqual({ content: [{ type: "text", text: "sunny" }], isError: false });
  });

  it("sends (no output) for undefined, an empty string and an empty result", () => {
    const none = { content: [{ type: "text", text: "(no output)" }], isError: false };
    expect(normalizeToolResult(undefined)).toEqual(none);
    expect(normalizeToolResult("")).toEqual(none);
    expect(normalizeToolResult({ content: [] })).toEqual(none);
  });

  it("sends other JSON values as indented JSON text", () => {
    expect(normalizeToolResult({ temp: 21, tags: ["a"] }).content).toEqual([
      { type: "text", text: '{\n  "temp": 21,\n  "tags": [\n    "a"\n  ]\n}' },
    ]);
    expect(normalizeToolResult(42).content).toEqual([{ type: "text", text: "42" }]);
    expect(normalizeToolResult(false).content).toEqual([{ type: "text", text: "false" }]);
    expect(normalizeToolResult(null).content).toEqual([{ type: "text", text: "null" }]);
    expect(normalizeToolResult([1, 2]).content).toEqual([{ type: "text", text: "[\n  1,\n  2\n]" }]);
    expect(normalizeToolResult([]).content).toEqual([{ type: "text", text: "[]" }]);
    expect(normalizeToolResult(new Date(0)).content).toEqual([{ type: "text", text: '"1970-01-01T00:00:00.000Z"' }]);
  });

  it("treats arrays of objects with other types as data, not content blocks", () => {
    const rows = [{ type: "user", name: "ada" }];
    expect(normalizeToolResult(rows)).toEqual({ content: [{ type: "text", text: JSON.stringify(rows, null, 2) }], isError: false });
  });

  it("joins text blocks with a newline into one block, as the runtime would read them", () => {
    const result = normalizeToolResult([
      { type: "text", text: "one" },
      { type: "text", text: "two" },
    ]);
    expect(result).toEqual({ content: [{ type: "text", text: "one\ntwo" }], isError: false });
  });

  it("keeps text and image blocks in order when an image is present, dropping unknown fields", () => {
    const result = normalizeToolResult({
      content: [
        { type: "text", text: "chart:", extra: 1 },
        { ...image, annotations: {} },
      ],
    });
    expect(result).toEqual({ content: [{ type: "text", text: "chart:" }, image], isError: false });
    for (const block of result.content) expect(wireContentBlockSchema.safeParse(block).success).toBe(true);
  });

  it("keeps isError from a ToolResult", () => {
    expect(normalizeToolResult(errorResult("disk full"))).toEqual({ content: [{ type: "text", text: "disk full" }], isError: true });
    expect(normalizeToolResult({ content: [{ type: "text", text: "ok" }], isError: false }).isError).toBe(false);
    expect(normalizeToolResult(textResult("fine"))).toEqual({ content: [{ type: "text", text: "fine" }], isError: false });
  });

  it("treats an object with other keys besides content as data", () => {
    const value = { content: [{ type: "text", text: "x" }], details: { a: 1 } };
    expect(normalizeToolResult(value).content[0]).toEqual({ type: "text", text: JSON.stringify(value, null, 2) });
  });

  it("reports a non-boolean isError", () => {
    const result = normalizeToolResult({ content: [{ type: "text", text: "x" }], isError: "yes" });
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining('"isError" must be a boolean') });
  });

  it.each([
    ["a text block without text", [{ type: "text", text: "ok" }, { type: "text" }], 'block 1 (text) needs a string "text"'],
    ["a text block with a number", [{ type: "text", text: 5 }], 'block 0 (text) needs a string "text", got a number'],
    ["an image without data", [image, { type: "image", mimeType: "image/png" }], 'block 1 (image) needs base64 "data"'],
    ["an image without mimeType", [{ type: "image", data: "AAAA" }], 'block 0 (image) needs a "mimeType"'],
    ["an image with a non-image mimeType", [{ type: "image", data: "AAAA", mimeType: "text/plain" }], 'block 0 (image) needs a "mimeType"'],
  ])("turns the whole result into an error naming the index: %s", (_label, blocks, expected) => {
    for (const value of [blocks, { content: blocks }]) {
      const result = normalizeToolResult(value);
      expect(result.isError).toBe(true);
      expect(result.content).toHaveLength(1);
      expect(result.content[0]).toMatchObject({ type: "text", text: expect.stringContaining(expected) });
    }
  });

  it("reports unsupported or missing block types inside a ToolResult", () => {
    const result = normalizeToolResult({ content: [{ type: "text", text: "a" }, { type: "video", url: "x" }, "plain", {}] });
    expect(result.isError).toBe(true);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain('block 1 has unsupported type "video"');
    expect(text).toContain("block 2 is a string");
    expect(text).toContain('block 3 has no "type"');
  });

  it("reports values that cannot be serialized instead of throwing", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const cases: [unknown, string][] = [
      [cyclic, "circular reference"],
      [{ id: 10n }, 'BigInt (at key "id")'],
      [10n, "BigInt"],
      [{ run: () => 1 }, 'function (at key "run")'],
      [() => 1, "function"],
      [Symbol("s"), "symbol"],
      [{ seen: new Set([1]) }, 'Set (at key "seen")'],
      [new Map(), "Map"],
    ];
    for (const [value, reason] of cases) {
      const result = normalizeToolResult(value);
      expect(result.isError, reason).toBe(true);
      expect(result.content).toEqual([{ type: "text", text: expect.stringContaining("could not be converted to JSON") }]);
      expect((result.content[0] as { text: string }).text).toContain(reason);
    }
  });

  it("reports a value whose getters throw", () => {
    const hostile = {
      get content(): never {
        throw new Error("getter exploded");
      },
    };
    const result = normalizeToolResult(hostile);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining("getter exploded") });
  });

  it("treats a returned Error as a tool error with its message", () => {
    expect(normalizeToolResult(new TypeError("bad city"))).toEqual({ content: [{ type: "text", text: "bad city" }], isError: true });
  });

  it("clamps the joined text once when there is no image", () => {
    const result = normalizeToolResult([
      { type: "text", text: "a".repeat(20_000) },
      { type: "text", text: "b".repeat(20_000) },
    ]);
    expect(result.content).toHaveLength(1);
    const text = (result.content[0] as { text: string }).text;
    expect(text.length).toBeLessThanOrEqual(32_000);
    expect(text).toContain("of 40,001 characters.]"); // 20,000 + "\n" + 20,000
    expect(text.startsWith("a".repeat(15_000))).toBe(true);
  });

  it("clamps each text block on its own when an image is present", () => {
    const result = normalizeToolResult({ content: [{ type: "text", text: "a".repeat(40_000) }, image, { type: "text", text: "short" }] });
    expect(result.content).toHaveLength(3);
    expect((result.content[0] as { text: string }).text).toContain("[Output truncated: showing 31,906 of 40,000 characters.]");
    expect(result.content[1]).toEqual(image);
    expect(result.content[2]).toEqual({ type: "text", text: "short" });
  });

  it("honours maxTextChars and rejects an invalid one", () => {
    const text = (normalizeToolResult("x".repeat(500), { maxTextChars: 200 }).content[0] as { text: string }).text;
    expect(text.length).toBeLessThanOrEqual(200);
    expect(text).toContain("of 500 characters.]");
    expect(() => normalizeToolResult("x", { maxTextChars: 0 })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });

  it("never throws for any JSON value, and always returns valid, bounded blocks", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const result = normalizeToolResult(value, { maxTextChars: 500 });
        expect(typeof result.isError).toBe("boolean");
        expect(result.content.length).toBeGreaterThan(0);
        for (const block of result.content) {
          expect(wireContentBlockSchema.safeParse(block).success).toBe(true);
          if (block.type === "text") expect(block.text.length).toBeLessThanOrEqual(500);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("never throws for arbitrary values either (functions, symbols, BigInts, cycles)", () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withMap: true, withSet: true, withDate: true, withTypedArray: true }),
        fc.func(fc.anything()),
        (value, fn) => {
          const cyclic: Record<string, unknown> = { value };
          cyclic.self = cyclic;
          for (const candidate of [value, fn, cyclic, [value, { type: "text", text: value }]]) {
            const result = normalizeToolResult(candidate);
            expect(result.content.length).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("textResult / errorResult", () => {
  it("build ToolResults", () => {
    expect(textResult("hi")).toEqual({ content: [{ type: "text", text: "hi" }] });
    expect(errorResult("no")).toEqual({ content: [{ type: "text", text: "no" }], isError: true });
  });
});
