import { describe, expect, it } from "vitest";
import {
  checkOutboundFrame,
  decodeFrame,
  decodeOutboundFrame,
  encodeFrame,
  type OutboundFrame,
} from "../../packages/toolrelay/src/wire/index.js";
import { loadFixtures } from "./load-fixtures.js";

const inbound = loadFixtures("wire/inbound");
const outbound = loadFixtures("wire/outbound");

describe("hand-written inbound fixtures", () => {
  it("cover every inbound frame type the SDK models", () => {
    const types = new Set(inbound.map((entry) => (entry.value as { type: string }).type));
    expect([...types].sort()).toEqual(
      [
        "abort_message_response",
        "app_server_info_response",
        "control_request",
        "external_tool_call_request",
        "input_accepted",
        "listener_ready",
        "pong",
        "runtime_external_tools_update_response",
        "runtime_start_response",
        "stream_delta",
        "sync_response",
        "turn_finished",
        "update_device_status",
        "update_loop_status",
        "update_queue",
        "update_subagent_state",
      ].sort(),
    );
  });

  it.each(inbound.map((entry) => [entry.name, entry] as const))("%s decodes to the same frame", (_name, entry) => {
    const decoded = decodeFrame(entry.text);
    expect(decoded).toMatchObject({ kind: "frame" });
    if (decoded.kind !== "frame") return;
    expect(decoded.frame).toEqual(entry.value);
    const value = entry.value as Record<string, unknown>;
    expect(decoded.envelope).toEqual({
      ...(typeof value.seq === "number" ? { seq: value.seq } : {}),
      ...(typeof value.event_seq === "number" ? { event_seq: value.event_seq } : {}),
      ...(typeof value.idempotency_key === "string" ? { idempotency_key: value.idempotency_key } : {}),
    });
  });
});

describe("hand-written outbound fixtures", () => {
  it("cover every outbound frame type", () => {
    const types = new Set(outbound.map((entry) => (entry.value as { type: string }).type));
    expect([...types].sort()).toEqual(
      [
        "abort_message",
        "ack",
        "app_server_info",
        "external_tool_call_response",
        "input",
        "ping",
        "runtime_external_tools_update",
        "runtime_start",
        "sync",
      ].sort(),
    );
  });

  it.each(outbound.map((entry) => [entry.name, entry] as const))("%s encodes byte for byte and decodes back", (_name, entry) => {
    const frame = entry.value as OutboundFrame;
    const text = encodeFrame(frame);
    expect(text).toBe(JSON.stringify(entry.value));
    expect(checkOutboundFrame(frame)).toEqual({ ok: true });
    const decoded = decodeOutboundFrame(text);
    expect(decoded).toMatchObject({ kind: "frame" });
    if (decoded.kind === "frame") expect(decoded.frame).toEqual(entry.value);
  });

  it("keeps the caller's field order", () => {
    const frame: OutboundFrame = {
      request_id: "r-1",
      error: "boom",
      type: "external_tool_call_response",
    };
    expect(encodeFrame(frame)).toBe('{"request_id":"r-1","error":"boom","type":"external_tool_call_response"}');
  });
});
