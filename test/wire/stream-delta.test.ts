/** streamDeltaSchema: every modelled message_type, the fallback, and the helpers. */
import { describe, expect, it } from "vitest";
import {
  inboundContentText,
  isKnownStreamDelta,
  knownStreamDeltaTypes,
  streamDeltaSchema,
  type StreamDelta,
} from "../../packages/toolrelay/src/wire/index.js";
import { loadFixtures } from "./load-fixtures.js";

const deltaFixtures = loadFixtures("wire/inbound")
  .filter((entry) => entry.name.startsWith("stream-delta-"))
  .map((entry) => (entry.value as { delta: StreamDelta }).delta);

describe("streamDeltaSchema", () => {
  it("has a hand-written fixture for every modelled message_type but the command ones", () => {
    const covered = new Set(deltaFixtures.map((delta) => delta.message_type));
    for (const type of knownStreamDeltaTypes) {
      if (["command_start", "command_end", "slash_command_end"].includes(type)) continue;
      expect(covered).toContain(type);
    }
  });

  it.each([
    ["assistant_message", { content: 5 }],
    ["reasoning_message", {}],
    ["tool_call_message", { tool_call: "get_weather" }],
    ["approval_request_message", { tool_calls: [{ name: 1 }] }],
    ["tool_return_message", { tool_return: "x", status: "success" }],
    ["stop_reason", { stop_reason: null }],
    ["error_message", { error_type: "x" }],
    ["client_tool_start", { tool_name: "x" }],
    ["client_tool_end", { tool_call_id: "c", status: "done" }],
    ["status", { level: "info" }],
    ["loop_error", { message: "x", is_terminal: "yes" }],
    ["retry", { attempt: "1" }],
    ["command_end", { success: "true" }],
  ])("rejects a %s delta missing or mistyping a field it relies on", (messageType, fields) => {
    expect(streamDeltaSchema.safeParse({ message_type: messageType, ...fields }).success).toBe(false);
  });

  it("keeps every field of an unknown message_type", () => {
    const delta = { message_type: "usage_statistics", prompt_tokens: 10, nested: { a: [1] } };
    const parsed = streamDeltaSchema.safeParse(delta);
    expect(parsed.success && parsed.data).toEqual(delta);
  });

  it("requires a string message_type", () => {
    expect(streamDeltaSchema.safeParse({ content: "x" }).success).toBe(false);
    expect(streamDeltaSchema.safeParse({ message_type: null }).success).toBe(false);
  });

  it("accepts a content part of another type next to text parts", () => {
    const delta = {
      message_type: "assistant_message",
      content: [
        { type: "text", text: "a" },
        { type: "image", source: {} },
      ],
    };
    expect(streamDeltaSchema.safeParse(delta).success).toBe(true);
  });
});

describe("isKnownStreamDelta", () => {
  it("narrows to the modelled deltas", () => {
    const delta: StreamDelta = { message_type: "client_tool_start", tool_call_id: "call_1", tool_name: "get_weather" };
    if (!isKnownStreamDelta(delta)) return expect.unreachable("client_tool_start is modelled");
    switch (delta.message_type) {
      case "client_tool_start":
        expect(delta.tool_call_id).toBe("call_1");
        break;
      default:
        expect.unreachable("narrowed to client_tool_start");
    }
  });

  it("is false for an unknown message_type", () => {
    expect(isKnownStreamDelta({ message_type: "approval_classification_end" })).toBe(false);
  });
});

describe("inboundContentText", () => {
  it("returns a string as is and concatenates text parts, skipping other parts", () => {
    expect(inboundContentText("hello")).toBe("hello");
    expect(
      inboundContentText([
        { type: "text", text: "Let me " },
        { type: "image", data: "x" },
        { type: "text", text: "check." },
      ]),
    ).toBe("Let me check.");
    expect(inboundContentText([])).toBe("");
  });
});
