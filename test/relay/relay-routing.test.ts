import { describe, expect, it } from "vitest";
import { RelayFrame, runtimeKeyOf, stampSeq, FRAGMENT_THRESHOLD } from "../../packages/relay/src/relay-frame.js";
import { channelForType, isResponseType, startRegistersTools, toolsUpdateRuntimes } from "../../packages/relay/src/relay-routing.js";

function frame(body: Record<string, unknown> | string): RelayFrame {
  const result = RelayFrame.read(typeof body === "string" ? body : JSON.stringify(body));
  if (!result) throw new Error("frame not readable");
  return result;
}

function stamped(text: string, seq: number): unknown {
  const { head, tail } = stampSeq(frame(text), seq);
  return JSON.parse(Buffer.concat([head, tail]).toString("utf8"));
}

describe("stampSeq", () => {
  it("appends seq as the last key, overriding an existing one", () => {
    expect(stamped('{"type":"x","a":1}', 7)).toEqual({ type: "x", a: 1, seq: 7 });
    expect(stamped('{"seq":99,"type":"x"}  ', 3)).toEqual({ type: "x", seq: 3 });
    expect(stamped('{ "type":"x" \n }', 1)).toEqual({ type: "x", seq: 1 });
  });

  it("keeps a large frame as it arrived and sends the seq as a second fragment", () => {
    const big = frame({ type: "stream_delta", pad: "é".repeat(FRAGMENT_THRESHOLD) });
    const result = stampSeq(big, 5);
    expect(result.head.buffer).toBe(big.data.buffer);
    expect(result.tail.toString()).toBe(',"seq":5}');
    expect(result.bytes).toBe(big.size + ',"seq":5'.length);
    expect(JSON.parse(Buffer.concat([result.head, result.tail]).toString())).toMatchObject({ type: "stream_delta", seq: 5 });
  });
});

describe("RelayFrame", () => {
  it("reads type, request id and runtime", () => {
    expect(frame({ type: "input_accepted", request_id: "r1" })).toMatchObject({
      type: "input_accepted",
      requestId: "r1",
      runtimeKey: undefined,
    });
    expect(frame({ type: "stream_delta", runtime: { agent_id: "a", conversation_id: "c" } }).runtimeKey).toBe(runtimeKeyOf("a", "c"));
    expect(frame({ type: "sync", runtime: { agent_id: "a" } }).runtimeKey).toBe(runtimeKeyOf("a", "default"));
    expect(frame({ type: "x", agent_id: "a", conversation_id: "c" }).runtimeKey).toBe(runtimeKeyOf("a", "c"));
    expect(frame({ type: "x", request_id: "" }).requestId).toBeUndefined();
  });

  it("knows that a runtime_start without conversation_id names no runtime yet", () => {
    expect(frame({ type: "runtime_start", agent_id: "a", create_conversation: {} }).runtimeKey).toBeUndefined();
    expect(frame({ type: "runtime_start", agent_id: "a", conversation_id: "default" }).runtimeKey).toBe(runtimeKeyOf("a", "default"));
  });

  it("rejects non-objects, missing types and documents nested too deep", () => {
    expect(RelayFrame.read("[1]")).toBeUndefined();
    expect(RelayFrame.read('{"type":5}')).toBeUndefined();
    expect(RelayFrame.read("not json")).toBeUndefined();
    expect(RelayFrame.read(`{"type":"x","a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`)).toBeUndefined();
  });

  it("keeps __proto__ keys as plain data", () => {
    const result = RelayFrame.read('{"type":"x","__proto__":{"polluted":true}}');
    expect(result?.type).toBe("x");
    expect(result?.field("__proto__")).toEqual(JSON.parse('{"polluted":true}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("parses a field only when asked, and reports an invalid one as absent", () => {
    const result = frame('{"type":"x","success":tru,"n":1}');
    expect(result.field("success")).toBeUndefined();
    expect(result.field("n")).toBe(1);
    expect(result.field("missing")).toBeUndefined();
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

describe("tool registration", () => {
  const tools = [{ tools: [{ name: "t", description: "d", parameters: {} }] }];

  it("a runtime_start registers tools only with a non-empty group", () => {
    expect(startRegistersTools(frame({ type: "runtime_start", agent_id: "a", conversation_id: "c", external_tools: tools }))).toBe(true);
    expect(startRegistersTools(frame({ type: "runtime_start", agent_id: "a", conversation_id: "c" }))).toBe(false);
    expect(startRegistersTools(frame({ type: "runtime_start", agent_id: "a", external_tools: [{ tools: [] }] }))).toBe(false);
  });

  it("runtime_external_tools_update registers or clears each runtime it names", () => {
    const runtimes = toolsUpdateRuntimes(
      frame({
        type: "runtime_external_tools_update",
        request_id: "u",
        updates: [
          { runtimes: [{ agent_id: "a", conversation_id: "c" }], external_tools: tools },
          { runtimes: [{ agent_id: "b" }, "junk"], external_tools: [] },
        ],
      }),
    );
    expect(runtimes).toEqual([
      { runtimeKey: runtimeKeyOf("a", "c"), registers: true },
      { runtimeKey: runtimeKeyOf("b", "default"), registers: false },
    ]);
    expect(toolsUpdateRuntimes(frame({ type: "input" }))).toBeUndefined();
  });
});
