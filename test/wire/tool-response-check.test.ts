/**
 * The hand-written `external_tool_call_response` check (the hot path) must
 * accept exactly what `externalToolCallResponseFrameSchema` accepts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkToolCallResponseFrame, externalToolCallResponseFrameSchema } from "../../packages/toolrelay/src/wire/index.js";

const anything = fc.oneof(
  fc.string({ maxLength: 5 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant([]),
  fc.constant({}),
  fc.constant(new Date(0)),
);
const extraKey = fc.constantFrom("isError", "mimeType", "data", "text", "type", "request_id", "content", "extra");
/** Mostly `good`, sometimes any value at all. */
const mostly = <T>(good: fc.Arbitrary<T>) => fc.oneof({ arbitrary: good, weight: 6 }, { arbitrary: anything, weight: 1 });
/** Sometimes adds one extra (often unknown) key. */
const withExtras = <T extends object>(base: fc.Arbitrary<T>) =>
  fc
    .tuple(base, fc.option(fc.tuple(extraKey, anything), { freq: 6 }))
    .map(([value, extra]) => (extra === null ? value : { ...value, [extra[0]]: extra[1] }));
const block = mostly(
  fc.oneof(
    withExtras(fc.record({ type: fc.constant("text"), text: mostly(fc.string({ maxLength: 8 })) }, { requiredKeys: ["type"] })),
    withExtras(
      fc.record(
        { type: fc.constant("image"), data: mostly(fc.string({ maxLength: 8 })), mimeType: mostly(fc.constant("image/png")) },
        { requiredKeys: ["type"] },
      ),
    ),
    withExtras(fc.record({ type: fc.oneof(fc.constantFrom("json", "TEXT", ""), anything) })),
  ),
);
const result = mostly(
  withExtras(fc.record({ content: mostly(fc.array(block, { maxLength: 3 })), is_error: mostly(fc.boolean()) }, { requiredKeys: [] })),
);
const base = {
  type: mostly(fc.constant("external_tool_call_response")),
  request_id: mostly(fc.string({ maxLength: 8 })),
};
const frame = mostly(
  fc.oneof(
    withExtras(fc.record({ ...base, result })),
    withExtras(fc.record({ ...base, error: mostly(fc.string({ maxLength: 8 })) })),
    withExtras(fc.record({ ...base, result, error: mostly(fc.string({ maxLength: 8 })) }, { requiredKeys: [] })),
  ),
);

describe("checkToolCallResponseFrame", () => {
  it("agrees with the zod schema on 5,000 generated frames", () => {
    let valid = 0;
    fc.assert(
      fc.property(frame, (candidate) => {
        const byHand = checkToolCallResponseFrame(candidate) === undefined;
        const byZod = externalToolCallResponseFrameSchema.safeParse(candidate).success;
        if (byHand) valid++;
        expect(byHand).toBe(byZod);
      }),
      { numRuns: 5000 },
    );
    expect(valid).toBeGreaterThan(100);
  });

  it("returns undefined for a valid frame and a path for an invalid one", () => {
    expect(checkToolCallResponseFrame({ type: "external_tool_call_response", request_id: "r", error: "x" })).toBeUndefined();
    expect(
      checkToolCallResponseFrame({
        type: "external_tool_call_response",
        request_id: "r",
        result: {
          content: [
            { type: "text", text: "a" },
            { type: "image", data: "" },
          ],
        },
      }),
    ).toBe("result.content[1].mimeType: Invalid input: expected string");
  });
});
