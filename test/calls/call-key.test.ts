import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { inputDigest, sameCall, type CallKey } from "../../packages/toolrelay/src/calls/index.js";
import { canonicalJson } from "../../packages/toolrelay/src/internal/canonical-json.js";

const key = (connectionId: string, agentId: string, conversationId: string, toolCallId: string): CallKey => ({
  connectionId,
  agentId,
  conversationId,
  toolCallId,
  inputDigest: "{}",
});

describe("sameCall", () => {
  it("is true only when every id and the input digest are equal (property)", () => {
    const ids = fc.tuple(fc.string(), fc.string(), fc.string(), fc.string());
    fc.assert(
      fc.property(ids, ids, fc.boolean(), (left, right, sameInput) => {
        const leftKey = { ...key(...left), inputDigest: "{}" };
        const rightKey = { ...key(...right), inputDigest: sameInput ? "{}" : '{"a":1}' };
        const same = sameInput && left.every((value, index) => value === right[index]);
        return sameCall(leftKey, rightKey) === same && sameCall(leftKey, { ...leftKey }) === true;
      }),
      { numRuns: 1_000 },
    );
  });

  it("keeps ids with separators apart (no concatenation ambiguity)", () => {
    const pairs: Array<[CallKey, CallKey]> = [
      [key("a:b", "c", "d", "t"), key("a", "b:c", "d", "t")],
      [key('a","b', "c", "d", "t"), key("a", "b", "c", "t")],
      [key("", "ab", "c", "t"), key("a", "b", "c", "t")],
      [key("a\u0000", "b", "c", "t"), key("a", "\u0000b", "c", "t")],
    ];
    for (const [left, right] of pairs) expect(sameCall(left, right)).toBe(false);
  });

  it("ignores property order and extra properties", () => {
    const reordered = { inputDigest: "{}", toolCallId: "t", conversationId: "v", agentId: "a", connectionId: "c", extra: "x" };
    expect(sameCall(reordered, key("c", "a", "v", "t"))).toBe(true);
  });
});

describe("inputDigest of canonicalJson", () => {
  it("sorts keys at every level, so equal inputs in any key order have one digest", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const reversed = Object.fromEntries(Object.entries(value).reverse());
        return inputDigest(canonicalJson(value)) === inputDigest(canonicalJson(reversed));
      }),
      { numRuns: 500 },
    );
  });

  it("tells different inputs apart (property, over JSON values)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (left, right) => {
        const same = canonicalJson(left) === canonicalJson(right);
        return (inputDigest(canonicalJson(left)) === inputDigest(canonicalJson(right))) === same;
      }),
      { numRuns: 1_000 },
    );
  });

  it("is the text itself up to 64 characters and a SHA-256 past them", () => {
    expect(inputDigest('{"city":"Paris"}')).toBe('{"city":"Paris"}');
    const long = canonicalJson({ text: "x".repeat(100) });
    expect(inputDigest(long)).toMatch(/^#[A-Za-z0-9_-]{43}$/);
    expect(inputDigest(long)).not.toBe(inputDigest(canonicalJson({ text: "y".repeat(100) })));
  });

  it("is the same text as the sorting walk for every JSON value (its one-stringify path included)", () => {
    const walk = (value: unknown): string => {
      if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
      if (Array.isArray(value)) return `[${value.map(walk).join(",")}]`;
      const record = value as Record<string, unknown>;
      return `{${Object.keys(record)
        .sort()
        .map((name) => `${JSON.stringify(name)}:${walk(record[name])}`)
        .join(",")}}`;
    };
    const flat = fc.dictionary(
      fc.string({ maxLength: 4 }),
      fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null)),
    );
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), flat), (value) => {
        // Through JSON, as an input arrives (a `__proto__` key stays an own property; -0 becomes 0).
        const parsed: unknown = JSON.parse(JSON.stringify(value));
        expect(canonicalJson(parsed)).toBe(walk(parsed));
      }),
      { numRuns: 2_000 },
    );
    expect(canonicalJson(JSON.parse('{"a":1,"b":"x","c":null}'))).toBe('{"a":1,"b":"x","c":null}');
    expect(canonicalJson(JSON.parse('{"b":1,"a":2}'))).toBe('{"a":2,"b":1}');
    expect(canonicalJson(JSON.parse('{"a":1,"a ":2,"__proto__":3}'))).toBe('{"__proto__":3,"a":1,"a ":2}');
  });

  it("its UTF-8 length is the input's size", () => {
    expect(Buffer.byteLength(canonicalJson({ word: "héllo" }))).toBe(Buffer.byteLength('{"word":"héllo"}'));
  });
});
