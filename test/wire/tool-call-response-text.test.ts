/**
 * The SDK writes its own `external_tool_call_response` frames from their strings: the text must be
 * exactly `JSON.stringify(frame)` for every shape it builds (any string: quotes, control
 * characters, lone surrogates, emoji).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeFrame, type ExternalToolCallResponseFrame } from "../../packages/toolrelay/src/wire/index.js";

const text = fc.string({ unit: "binary", maxLength: 40 });
const block = fc.oneof(
  fc.record({ type: fc.constant("text" as const), text }),
  fc.record({
    type: fc.constant("image" as const),
    data: fc.base64String({ minLength: 4, maxLength: 20 }),
    mimeType: fc.constant("image/png"),
  }),
);
const frame: fc.Arbitrary<ExternalToolCallResponseFrame> = fc.oneof(
  fc.record({ type: fc.constant("external_tool_call_response" as const), request_id: text, error: text }),
  fc.record({
    type: fc.constant("external_tool_call_response" as const),
    request_id: text,
    result: fc.oneof(
      fc.record({ content: fc.array(block, { maxLength: 4 }) }),
      fc.record({ content: fc.array(block, { maxLength: 4 }), is_error: fc.boolean() }),
    ),
  }),
);

describe("the text of a trusted external_tool_call_response", () => {
  it("is JSON.stringify(frame) for 3,000 generated answers", () => {
    fc.assert(
      fc.property(frame, (value) => {
        expect(encodeFrame(value, true)).toBe(JSON.stringify(value));
      }),
      { numRuns: 3000 },
    );
  });

  it("parses back to the frame (quotes, newlines, a lone surrogate, an emoji)", () => {
    const value: ExternalToolCallResponseFrame = {
      type: "external_tool_call_response",
      request_id: 'external-tool-"1"\n',
      result: { content: [{ type: "text", text: "a\u0000b\ud800c😀" }], is_error: true },
    };
    expect(JSON.parse(encodeFrame(value, true))).toEqual(value);
    expect(encodeFrame(value, true)).toBe(JSON.stringify(value));
  });
});
