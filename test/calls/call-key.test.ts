import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { callScopeId, canonicalJson, inputDigest, type CallKey } from "../../src/calls/index.js";

const key = (connectionId: string, agentId: string, conversationId: string, toolCallId: string): CallKey => ({
  connectionId,
  agentId,
  conversationId,
  toolCallId,
  inputDigest: "{}",
});

const scope = (connectionId: string, agentId: string, conversationId: string): CallKey => key(connectionId, agentId, conversationId, "t");

describe("callScopeId", () => {
  it("is a JSON array of the three scope ids in fixed order", () => {
    expect(callScopeId(scope("c", "a", "v"))).toBe('["c","a","v"]');
  });

  it("ignores property order, the tool call id and extra properties", () => {
    const reordered = { inputDigest: "x", toolCallId: "other", conversationId: "v", agentId: "a", connectionId: "c", extra: "x" };
    expect(callScopeId(reordered)).toBe(callScopeId(scope("c", "a", "v")));
  });

  it("keeps ids with separators apart (no concatenation ambiguity)", () => {
    const pairs: Array<[CallKey, CallKey]> = [
      [scope("a:b", "c", "d"), scope("a", "b:c", "d")],
      [scope('a","b', "c", "d"), scope("a", "b", "c")],
      [scope("", "ab", "c"), scope("a", "b", "c")],
      [scope("a\u0000", "b", "c"), scope("a", "\u0000b", "c")],
    ];
    for (const [left, right] of pairs) expect(callScopeId(left)).not.toBe(callScopeId(right));
  });

  it("is injective over arbitrary strings (property)", () => {
    const ids = fc.tuple(fc.string(), fc.string(), fc.string());
    fc.assert(
      fc.property(ids, ids, (left, right) => {
        const same = left.every((value, index) => value === right[index]);
        return (callScopeId(scope(...left)) === callScopeId(scope(...right))) === same;
      }),
      { numRuns: 1_000 },
    );
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

  it("its UTF-8 length is the input's size", () => {
    expect(Buffer.byteLength(canonicalJson({ word: "héllo" }))).toBe(Buffer.byteLength('{"word":"héllo"}'));
  });
});
