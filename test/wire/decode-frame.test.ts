/** decodeFrame's classification rules: frame, unknown, invalid; envelope extraction. */
import { describe, expect, it } from "vitest";
import { decodeFrame, isKnownStreamDelta } from "../../packages/toolrelay/src/wire/index.js";
import { fixture } from "./load-fixtures.js";

// biome-ignore lint/suspicious/noExplicitAny: a test reads a decoded frame's nested fields without declaring every shape
type Frame = Record<string, any>;
const text = (value: unknown): string => JSON.stringify(value);

describe("decodeFrame: what is not a frame", () => {
  it.each([
    ["a number", "42"],
    ["a string", '"stream_delta"'],
    ["an array", '[{"type":"pong"}]'],
    ["null", "null"],
    ["a boolean", "true"],
  ])("reports JSON that is %s as invalid", (_label, input) => {
    expect(decodeFrame(input)).toEqual({ kind: "invalid", error: "frame is not a JSON object", envelope: {} });
  });

  it("reports text that is not JSON as invalid, without quoting it", () => {
    const decoded = decodeFrame('{"type":"external_tool_call_response","secret-token-1":');
    expect(decoded).toMatchObject({ kind: "invalid", envelope: {} });
    if (decoded.kind === "invalid") {
      expect(decoded.error).toMatch(/^invalid JSON/);
      expect(decoded.error).not.toContain("secret-token");
    }
  });

  it("reports an empty message as invalid", () => {
    expect(decodeFrame("")).toMatchObject({ kind: "invalid" });
  });

  it.each([
    ["no type", { request_id: "r" }],
    ["a numeric type", { type: 7 }],
    ["a null type", { type: null }],
    ["an object type", { type: { name: "pong" } }],
  ])("reports an object with %s as invalid", (_label, value) => {
    expect(decodeFrame(text(value))).toMatchObject({ kind: "invalid", error: 'frame has no string "type"' });
  });

  it("still extracts the envelope of an object without a type", () => {
    expect(decodeFrame(text({ seq: 7, idempotency_key: "k" }))).toMatchObject({
      kind: "invalid",
      envelope: { seq: 7, idempotency_key: "k" },
    });
  });
});

describe("decodeFrame: unknown frame types are tolerated", () => {
  it("reports an unknown type as unknown, with its envelope", () => {
    expect(
      decodeFrame(text({ type: "update_background_processes", seq: 12, event_seq: 40, idempotency_key: "x:40:u", processes: [] })),
    ).toEqual({
      kind: "unknown",
      type: "update_background_processes",
      envelope: { seq: 12, event_seq: 40, idempotency_key: "x:40:u" },
    });
  });

  it("treats outbound-only types arriving inbound as unknown", () => {
    expect(decodeFrame(text({ type: "ping" }))).toMatchObject({ kind: "unknown", type: "ping" });
  });

  it("is case-sensitive about types", () => {
    expect(decodeFrame(text({ type: "STREAM_DELTA" }))).toMatchObject({ kind: "unknown" });
  });
});

describe("decodeFrame: known types are checked", () => {
  it("reports a known type with a missing field as invalid, naming the path", () => {
    const frame = fixture("wire/inbound", "external-tool-call-request") as Frame;
    delete frame.tool_name;
    expect(decodeFrame(text(frame))).toEqual({
      kind: "invalid",
      type: "external_tool_call_request",
      requestId: frame.request_id,
      error: "external_tool_call_request: tool_name: Invalid input: expected string, received undefined",
      envelope: {},
    });
  });

  it("requires external_tool_call_request.input to be an object", () => {
    const frame = fixture("wire/inbound", "external-tool-call-request") as Frame;
    frame.input = ["Paris"];
    expect(decodeFrame(text(frame))).toMatchObject({ kind: "invalid", error: expect.stringContaining("input:") });
  });

  it("requires string request_id and tool_call_id on external_tool_call_request", () => {
    for (const field of ["request_id", "tool_call_id"]) {
      const frame = fixture("wire/inbound", "external-tool-call-request") as Frame;
      frame[field] = 1;
      expect(decodeFrame(text(frame))).toMatchObject({ kind: "invalid", error: expect.stringContaining(`${field}:`) });
    }
  });

  it("accepts an external_tool_call_request without runtime, and with agent_id null", () => {
    expect(decodeFrame(text(fixture("wire/inbound", "external-tool-call-request-unscoped-runtime")))).toMatchObject({ kind: "frame" });
    expect(decodeFrame(text(fixture("wire/inbound", "external-tool-call-request-scoped")))).toMatchObject({ kind: "frame" });
  });

  it('accepts tool input with an own "constructor" key (zod\'s z.record would refuse it)', () => {
    const frame = fixture("wire/inbound", "external-tool-call-request") as Frame;
    frame.input = { constructor: "Point", toString: "x", hasOwnProperty: 1 };
    expect(decodeFrame(text(frame))).toMatchObject({ kind: "frame", frame: { input: { constructor: "Point" } } });
  });

  it("keeps fields it does not model", () => {
    const decoded = decodeFrame(text(fixture("wire/inbound", "external-tool-call-request-unscoped-runtime")));
    expect(decoded.kind === "frame" && (decoded.frame as Frame).future_field).toEqual({ kept: true });
  });

  it("extracts the envelope of a known frame that fails its schema", () => {
    const frame = fixture("wire/inbound", "turn-finished") as Frame;
    frame.turn_id = 5;
    expect(decodeFrame(text(frame))).toMatchObject({
      kind: "invalid",
      type: "turn_finished",
      envelope: { event_seq: 30, idempotency_key: frame.idempotency_key },
    });
  });

  it("reads listener_ready as the real listener sends it: a string generation and an attempt from 1", () => {
    const ready = fixture("wire/inbound", "listener-ready") as Frame;
    expect(decodeFrame(text(ready))).toMatchObject({
      kind: "frame",
      frame: { connection_generation: expect.any(String), connection_attempt: 1 },
    });
    expect(decodeFrame(text({ ...ready, connection_generation: 2 }))).toMatchObject({
      kind: "invalid",
      error: expect.stringContaining("connection_generation"),
    });
    expect(decodeFrame(text({ ...ready, connection_attempt: 0 }))).toMatchObject({
      kind: "invalid",
      error: expect.stringContaining("connection_attempt"),
    });
    expect(decodeFrame(text({ ...ready, connection_attempt: 1.5 }))).toMatchObject({ kind: "invalid" });
  });

  it("reports a control_request with an unknown subtype as invalid (it cannot be answered)", () => {
    const frame = fixture("wire/inbound", "control-request") as Frame;
    frame.request = { subtype: "elicit", question: "?" };
    expect(decodeFrame(text(frame))).toMatchObject({ kind: "invalid", error: expect.stringContaining("request.subtype") });
  });
});

describe("decodeFrame: stream_delta", () => {
  it("keeps a delta of an unknown message_type as a valid frame", () => {
    const decoded = decodeFrame(text(fixture("wire/inbound", "stream-delta-unknown-message-type")));
    expect(decoded).toMatchObject({ kind: "frame" });
    if (decoded.kind === "frame" && decoded.frame.type === "stream_delta") {
      expect(decoded.frame.delta.message_type).toBe("hidden_reasoning_message");
      expect(isKnownStreamDelta(decoded.frame.delta)).toBe(false);
    }
  });

  it("reports a known message_type with a bad field as invalid, naming the delta path", () => {
    const frame = fixture("wire/inbound", "stream-delta-assistant-message-parts") as Frame;
    frame.delta.content[1].text = 5;
    expect(decodeFrame(text(frame))).toMatchObject({
      kind: "invalid",
      error: "stream_delta: delta.content[1].text: Invalid input: expected string, received number",
    });
  });

  it("reports a tool_return_message with an unknown status as invalid", () => {
    const frame = fixture("wire/inbound", "stream-delta-tool-return-message") as Frame;
    frame.delta.status = "pending";
    expect(decodeFrame(text(frame))).toMatchObject({ kind: "invalid", error: expect.stringContaining("delta.status") });
  });

  it("reports a client_tool_start without tool_call_id as invalid", () => {
    const frame = fixture("wire/inbound", "stream-delta-client-tool-start") as Frame;
    delete frame.delta.tool_call_id;
    expect(decodeFrame(text(frame))).toMatchObject({ kind: "invalid", error: expect.stringContaining("delta.tool_call_id") });
  });

  it("reports a delta without a string message_type as invalid", () => {
    const frame = fixture("wire/inbound", "stream-delta-stop-reason") as Frame;
    frame.delta.message_type = 3;
    expect(decodeFrame(text(frame))).toMatchObject({ kind: "invalid", error: expect.stringContaining("delta.message_type") });
    delete frame.delta.message_type;
    expect(decodeFrame(text(frame))).toMatchObject({ kind: "invalid" });
  });

  it("accepts a partial tool_calls delta with null fields", () => {
    expect(decodeFrame(text(fixture("wire/inbound", "stream-delta-tool-call-message-partial")))).toMatchObject({ kind: "frame" });
  });

  it("reports a delta that is not an object as invalid", () => {
    expect(decodeFrame(text({ type: "stream_delta", delta: "hello" }))).toMatchObject({
      kind: "invalid",
      error: expect.stringContaining("delta"),
    });
  });
});

describe("decodeFrame: the envelope", () => {
  it("extracts seq from a cloud-relayed frame", () => {
    expect(decodeFrame(text(fixture("wire/inbound", "cloud-relayed-stream-delta"))).envelope).toMatchObject({ seq: 101, event_seq: 40 });
  });

  it("leaves out fields of the wrong type", () => {
    expect(decodeFrame(text({ type: "pong", seq: "1", event_seq: null, idempotency_key: 4 })).envelope).toEqual({});
  });

  it("leaves out a seq that JSON turns into Infinity", () => {
    expect(decodeFrame('{"type":"pong","seq":1e999,"event_seq":-1e999}').envelope).toEqual({});
  });

  it("returns an empty envelope for frames without delivery fields", () => {
    expect(decodeFrame(text({ type: "pong" }))).toEqual({ kind: "frame", frame: { type: "pong" }, envelope: {} });
  });
});

describe("decodeFrame: options", () => {
  it("honours a smaller maxDepth", () => {
    const nested = text({ type: "update_device_status", device_status: { a: { b: { c: {} } } } });
    expect(decodeFrame(nested)).toMatchObject({ kind: "frame" });
    expect(decodeFrame(nested, { maxDepth: 3 })).toMatchObject({ kind: "invalid", error: expect.stringContaining("deeper than 3") });
  });

  it("never throws for a value that is not a string", () => {
    expect(decodeFrame(Buffer.from('{"type":"pong"}') as unknown as string)).toMatchObject({ kind: "invalid" });
    expect(decodeFrame(undefined as unknown as string)).toMatchObject({ kind: "invalid" });
  });
});
