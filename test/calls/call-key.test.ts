import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { callKeyId, sameCallKey, type CallKey } from "../../src/calls/index.js";

const key = (connectionId: string, agentId: string, conversationId: string, toolCallId: string): CallKey => ({
  connectionId,
  agentId,
  conversationId,
  toolCallId,
});

describe("callKeyId", () => {
  it("is a JSON array of the four ids in fixed order", () => {
    expect(callKeyId(key("c", "a", "v", "t"))).toBe('["c","a","v","t"]');
    expect(JSON.parse(callKeyId(key("c", "a", "v", "t")))).toEqual(["c", "a", "v", "t"]);
  });

  it("ignores property order and extra properties", () => {
    const reordered = { toolCallId: "t", conversationId: "v", agentId: "a", connectionId: "c", extra: "x" };
    expect(callKeyId(reordered)).toBe(callKeyId(key("c", "a", "v", "t")));
  });

  it("keeps ids with separators apart (no concatenation ambiguity)", () => {
    const pairs: Array<[CallKey, CallKey]> = [
      [key("a:b", "c", "d", "e"), key("a", "b:c", "d", "e")],
      [key("a/b", "c", "d", "e"), key("a", "b/c", "d", "e")],
      [key('a","b', "c", "d", "e"), key("a", "b", "c", "d")],
      [key("", "ab", "c", "d"), key("a", "b", "c", "d")],
      [key("a\u0000", "b", "c", "d"), key("a", "\u0000b", "c", "d")],
    ];
    for (const [left, right] of pairs) {
      expect(callKeyId(left)).not.toBe(callKeyId(right));
      expect(sameCallKey(left, right)).toBe(false);
    }
  });

  it("is injective over arbitrary strings (property)", () => {
    const ids = fc.tuple(fc.string(), fc.string(), fc.string(), fc.string());
    fc.assert(
      fc.property(ids, ids, (left, right) => {
        const same = left.every((value, index) => value === right[index]);
        return (callKeyId(key(...left)) === callKeyId(key(...right))) === same;
      }),
      { numRuns: 1_000 },
    );
  });

  it("differs in every one of the four scopes", () => {
    const base = key("c", "a", "v", "t");
    expect(sameCallKey(base, { ...base })).toBe(true);
    for (const field of ["connectionId", "agentId", "conversationId", "toolCallId"] as const) {
      expect(sameCallKey(base, { ...base, [field]: "other" })).toBe(false);
    }
  });
});
