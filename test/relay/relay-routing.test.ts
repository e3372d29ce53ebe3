import { describe, expect, it } from "vitest";
import {
  channelForType,
  isResponseType,
  readFrameFacts,
  runtimeKeyOf,
  toolRegistrationOf,
  withSeq,
  type FrameFacts,
} from "../../src/relay/relay-routing.js";

function facts(frame: Record<string, unknown>): FrameFacts {
  const result = readFrameFacts(JSON.stringify(frame));
  if (!result) throw new Error("frame not readable");
  return result;
}

describe("withSeq", () => {
  it("appends seq as the last key, overriding an existing one", () => {
    expect(JSON.parse(withSeq('{"type":"x","a":1}', 7))).toEqual({ type: "x", a: 1, seq: 7 });
    expect(JSON.parse(withSeq('{"seq":99,"type":"x"}  ', 3))).toEqual({ type: "x", seq: 3 });
    expect(JSON.parse(withSeq("{ }", 1))).toEqual({ seq: 1 });
  });
});

describe("readFrameFacts", () => {
  it("reads type, request id and runtime", () => {
    expect(facts({ type: "input_accepted", request_id: "r1" })).toMatchObject({ type: "input_accepted", requestId: "r1", runtimeKey: undefined });
    expect(facts({ type: "stream_delta", runtime: { agent_id: "a", conversation_id: "c" } }).runtimeKey).toBe(runtimeKeyOf("a", "c"));
    expect(facts({ type: "sync", runtime: { agent_id: "a" } }).runtimeKey).toBe(runtimeKeyOf("a", "default"));
    expect(facts({ type: "x", agent_id: "a", conversation_id: "c" }).runtimeKey).toBe(runtimeKeyOf("a", "c"));
  });

  it("knows that a runtime_start without conversation_id names no runtime yet", () => {
    expect(facts({ type: "runtime_start", agent_id: "a", create_conversation: {} }).runtimeKey).toBeUndefined();
    expect(facts({ type: "runtime_start", agent_id: "a", conversation_id: "default" }).runtimeKey).toBe(runtimeKeyOf("a", "default"));
  });

  it("rejects non-objects, missing types and documents nested too deep", () => {
    expect(readFrameFacts("[1]")).toBeUndefined();
    expect(readFrameFacts('{"type":5}')).toBeUndefined();
    expect(readFrameFacts("not json")).toBeUndefined();
    expect(readFrameFacts(`{"type":"x","a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`)).toBeUndefined();
  });

  it("keeps __proto__ keys as plain data", () => {
    const result = readFrameFacts('{"type":"x","__proto__":{"polluted":true}}');
    expect(result?.type).toBe("x");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("channels and responses", () => {
  it("puts the listener's stream types on the stream channel", () => {
    for (const type of ["stream_delta", "update_device_status", "update_loop_status", "update_queue", "update_subagent_state"]) {
      expect(channelForType(type)).toBe("stream");
    }
    for (const type of ["turn_finished", "external_tool_call_request", "runtime_start_response", "control_request"]) {
      expect(channelForType(type)).toBe("control");
    }
  });

  it("recognises responses", () => {
    expect(isResponseType("runtime_start_response")).toBe(true);
    expect(isResponseType("input_accepted")).toBe(true);
    expect(isResponseType("control_request")).toBe(false);
  });
});

describe("toolRegistrationOf", () => {
  const tools = [{ tools: [{ name: "t", description: "d", parameters: {} }] }];

  it("runtime_start with tools registers its runtime; without tools it clears it", () => {
    expect(toolRegistrationOf(facts({ type: "runtime_start", agent_id: "a", conversation_id: "c", external_tools: tools }))).toEqual({
      registered: [runtimeKeyOf("a", "c")],
      cleared: [],
      registersAny: true,
    });
    expect(toolRegistrationOf(facts({ type: "runtime_start", agent_id: "a", conversation_id: "c" }))).toEqual({
      registered: [],
      cleared: [runtimeKeyOf("a", "c")],
      registersAny: false,
    });
    expect(toolRegistrationOf(facts({ type: "runtime_start", agent_id: "a", conversation_id: "c", external_tools: [{ tools: [] }] }))?.registersAny).toBe(false);
  });

  it("runtime_external_tools_update registers or clears each runtime it names", () => {
    const registration = toolRegistrationOf(
      facts({
        type: "runtime_external_tools_update",
        request_id: "u",
        updates: [
          { runtimes: [{ agent_id: "a", conversation_id: "c" }], external_tools: tools },
          { runtimes: [{ agent_id: "b" }, "junk"], external_tools: [] },
        ],
      }),
    );
    expect(registration).toEqual({ registered: [runtimeKeyOf("a", "c")], cleared: [runtimeKeyOf("b", "default")], registersAny: true });
  });

  it("ignores other frames", () => {
    expect(toolRegistrationOf(facts({ type: "input" }))).toBeUndefined();
  });
});
