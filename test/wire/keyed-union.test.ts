import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatIssues, keyedUnion } from "../../packages/toolrelay/src/wire/index.js";

const shape = keyedUnion("kind", [
  z.looseObject({ kind: z.literal("circle"), radius: z.number() }),
  z.looseObject({ kind: z.literal(["square", "box"]), side: z.number() }),
]);

describe("keyedUnion", () => {
  it("checks a known key value against its own schema, with a precise path", () => {
    const result = z.object({ item: shape }).safeParse({ item: { kind: "circle", radius: "2" } });
    expect(!result.success && formatIssues(result.error.issues)).toBe("item.radius: Invalid input: expected number, received string");
  });

  it("accepts every literal of a multi-value option", () => {
    expect(shape.safeParse({ kind: "box", side: 1 }).success).toBe(true);
    expect(shape.safeParse({ kind: "square", side: "1" }).success).toBe(false);
  });

  it("keeps an unknown key value with all its fields", () => {
    expect(shape.parse({ kind: "triangle", sides: [1, 2, 3] })).toEqual({ kind: "triangle", sides: [1, 2, 3] });
  });

  it("requires the key to be a string", () => {
    expect(shape.safeParse({ radius: 1 }).success).toBe(false);
    expect(shape.safeParse("circle").success).toBe(false);
  });

  it("refuses options without a literal key, or with a duplicate value", () => {
    expect(() => keyedUnion("kind", [z.looseObject({ kind: z.string() })])).toThrow(TypeError);
    expect(() => keyedUnion("kind", [z.looseObject({ kind: z.literal("a") }), z.looseObject({ kind: z.literal("a") })])).toThrow(
      /duplicate/,
    );
  });
});
