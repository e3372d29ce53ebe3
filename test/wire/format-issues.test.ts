import { describe, expect, it } from "vitest";
import { z } from "zod";
import { flattenIssues, formatIssues, formatPath } from "../../packages/toolrelay/src/wire/index.js";

describe("formatPath", () => {
  it.each([
    [[], "(root)"],
    [["result", "content", 0, "text"], "result.content[0].text"],
    [[0, "a"], "[0].a"],
    [["with space", "x-y", "ok_1"], '["with space"]["x-y"].ok_1'],
    [[Symbol("s")], '["Symbol(s)"]'],
  ] as const)("%j → %s", (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });
});

describe("formatIssues", () => {
  it("resolves a union to the closest variant", () => {
    const schema = z.object({
      payload: z.union([
        z.strictObject({ kind: z.literal("a"), value: z.string() }),
        z.strictObject({ kind: z.literal("a"), other: z.number(), more: z.string() }),
      ]),
    });
    const result = schema.safeParse({ payload: { kind: "a", value: 1 } });
    expect(result.success).toBe(false);
    if (!result.success) {
      expect(flattenIssues(result.error.issues)).toEqual([
        { path: ["payload", "value"], message: "Invalid input: expected string, received number" },
      ]);
      expect(formatIssues(result.error.issues)).toBe("payload.value: Invalid input: expected string, received number");
    }
  });

  it("explains a discriminated union without a matching variant", () => {
    const schema = z.discriminatedUnion("kind", [z.object({ kind: z.literal("a") }), z.object({ kind: z.literal("b") })]);
    const result = schema.safeParse({ kind: "c" });
    expect(!result.success && formatIssues(result.error.issues)).toBe("kind: Invalid input: no variant has this value");
  });

  it("limits the number of issues shown", () => {
    const schema = z.object({ a: z.string(), b: z.string(), c: z.string(), d: z.string() });
    const result = schema.safeParse({});
    expect(!result.success && formatIssues(result.error.issues, 2)).toMatch(/^a: .*; b: .*; and 2 more$/);
  });
});
