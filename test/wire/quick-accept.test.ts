/**
 * `decodeFrame` accepts a plain `external_tool_call_request` without zod. The quick accept must
 * never accept what the schema refuses (it would let a malformed frame reach the call table), and
 * must accept the frames the runtime writes (else it saves nothing).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPlainExternalToolCallRequest } from "../../packages/toolrelay/src/wire/tool-call-frames.js";
import { decodeFrame, externalToolCallRequestFrameSchema } from "../../packages/toolrelay/src/wire/index.js";

const anyValue = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.dictionary(fc.constantFrom("a", "constructor", "__proto__"), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
);
/** A field that is absent, right, or something else. */
const maybe = <T>(right: fc.Arbitrary<T>) => fc.option(fc.oneof(right, anyValue), { nil: undefined });
const runtime = fc.record(
  {
    agent_id: fc.oneof(fc.string({ maxLength: 6 }), fc.constant(null), anyValue),
    conversation_id: fc.oneof(fc.string({ maxLength: 6 }), anyValue),
    acting_user_id: maybe(fc.string({ maxLength: 6 })),
    extra: maybe(anyValue),
  },
  { requiredKeys: [] },
);
const frame = fc.record(
  {
    type: fc.oneof(fc.constant("external_tool_call_request"), anyValue),
    request_id: maybe(fc.string({ maxLength: 12 })),
    runtime: maybe(runtime),
    scope_id: maybe(fc.string({ maxLength: 6 })),
    tool_call_id: maybe(fc.string({ maxLength: 12 })),
    tool_name: maybe(fc.string({ maxLength: 12 })),
    input: maybe(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })),
    seq: maybe(fc.integer()),
  },
  { requiredKeys: [] },
);

describe("the quick accept of external_tool_call_request", () => {
  it("accepts nothing the schema refuses, and decodeFrame decides as the schema does (3,000 generated frames)", () => {
    let accepted = 0;
    fc.assert(
      fc.property(frame, (value) => {
        // Through JSON, as a frame arrives (undefined members vanish, `__proto__` stays an own key).
        const parsed = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
        const schemaAccepts = externalToolCallRequestFrameSchema.safeParse(parsed).success;
        if (isPlainExternalToolCallRequest(parsed)) {
          accepted++;
          expect(schemaAccepts).toBe(true);
        }
        const decoded = decodeFrame(JSON.stringify(value));
        if (parsed.type === "external_tool_call_request") expect(decoded.kind).toBe(schemaAccepts ? "frame" : "invalid");
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it("accepts the frames the runtime writes: with and without runtime, scope_id, a null agent_id", () => {
    const base = {
      type: "external_tool_call_request",
      request_id: "external-tool-1",
      tool_call_id: "call_0",
      tool_name: "echo",
      input: {},
    };
    const frames = [
      base,
      { ...base, runtime: { agent_id: "agent-1", conversation_id: "conv-1" } },
      { ...base, runtime: { agent_id: null, conversation_id: "conv-1", acting_user_id: "user-1" }, scope_id: "editor" },
      { ...base, input: { constructor: "kept", nested: { deep: [1, 2] } } },
    ];
    for (const value of frames) expect(isPlainExternalToolCallRequest(value)).toBe(true);
  });

  it("leaves every malformed field to the schema", () => {
    const base = { type: "external_tool_call_request", request_id: "r", tool_call_id: "c", tool_name: "t", input: {} };
    const malformed: Record<string, unknown>[] = [
      { ...base, request_id: 1 },
      { ...base, tool_call_id: null },
      { ...base, tool_name: undefined },
      { ...base, scope_id: 3 },
      { ...base, input: [] },
      { ...base, input: null },
      { ...base, runtime: null },
      { ...base, runtime: { agent_id: 1, conversation_id: "c" } },
      { ...base, runtime: { agent_id: "a" } },
      { ...base, runtime: { agent_id: "a", conversation_id: "c", acting_user_id: 2 } },
    ];
    for (const value of malformed) {
      expect(isPlainExternalToolCallRequest(value)).toBe(false);
      expect(externalToolCallRequestFrameSchema.safeParse(value).success).toBe(false);
    }
  });
});
