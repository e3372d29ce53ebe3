/**
 * docs/protocol.md#sync, docs/protocol.md#input, docs/protocol.md#abort_message and
 * docs/protocol.md#transport-frames: `input`, `sync`, `abort_message`,
 * `app_server_info`, `ping` and `ack` frames the runtime (or relay) would not
 * accept are refused by encodeFrame; plus encodeFrame's general guarantees.
 */
import { describe, expect, it } from "vitest";
import { encodeFrame, type OutboundFrame } from "../../packages/toolrelay/src/wire/index.js";
import { expectAccepted, expectRejected, rejection } from "./reject.js";
import { fixture } from "./load-fixtures.js";

// biome-ignore lint/suspicious/noExplicitAny: a test reads a decoded frame's nested fields without declaring every shape
type Frame = Record<string, any>;
const message = (): Frame => fixture("wire/outbound", "input-create-message");
const allow = (): Frame => fixture("wire/outbound", "input-approval-allow");
const deny = (): Frame => fixture("wire/outbound", "input-approval-deny");

describe("input", () => {
  it("rejects a missing runtime and a runtime with an empty agent_id", () => {
    const frame = message();
    frame.runtime.agent_id = "";
    expectRejected(frame, "runtime.agent_id");
    delete frame.runtime;
    expectRejected(frame, "runtime: Invalid input: expected object");
  });

  it("rejects a payload that is not an object", () => {
    const frame = message();
    frame.payload = "hello";
    expectRejected(frame, "payload");
  });

  it("rejects an unsupported payload kind", () => {
    const frame = message();
    frame.payload.kind = "teleport_continue";
    expectRejected(frame, "payload.kind");
  });

  it("rejects create_message without a messages array", () => {
    const frame = message();
    frame.payload.messages = { role: "user", content: "hi" };
    expectRejected(frame, "payload.messages: Invalid input: expected array");
  });

  it("rejects a message that is not an object", () => {
    const frame = message();
    frame.payload.messages = ["hi"];
    expectRejected(frame, "payload.messages[0]");
  });

  it("rejects an approval message inside create_message", () => {
    const frame = message();
    frame.payload.messages.push({ type: "approval", approvals: [] });
    expectRejected(frame, "payload.messages[1].type: approval messages are not allowed in create_message");
  });

  it("rejects an image_failure_mode other than strict or drop", () => {
    const frame = message();
    frame.payload.image_failure_mode = "ignore";
    expectRejected(frame, "payload.image_failure_mode");
  });

  it.each(["client_tool_allowlist", "external_tool_scope_ids"])("rejects a %s that is not a string array", (field) => {
    const frame = message();
    frame.payload[field] = ["get_weather", 1];
    expectRejected(frame, `payload.${field}[1]`);
  });

  it("rejects an exclude_interactive_tools that is not a boolean", () => {
    const frame = message();
    frame.payload.exclude_interactive_tools = 1;
    expectRejected(frame, "payload.exclude_interactive_tools");
  });

  it("rejects an empty request_id on input", () => {
    const frame = message();
    frame.request_id = "";
    expectRejected(frame, "request_id");
  });

  it("rejects an approval_response without a request_id", () => {
    const frame = allow();
    delete frame.payload.request_id;
    expectRejected(frame, "payload.request_id");
  });

  it("rejects an approval_response with neither decision nor error", () => {
    const frame = allow();
    delete frame.payload.decision;
    expectRejected(frame, "payload: needs either decision or error");
  });

  it("rejects an approval_response with both decision and error", () => {
    const frame = allow();
    frame.payload.error = "x";
    expectRejected(frame, "payload.error: send either decision or error, not both");
  });

  it("rejects a deny decision without a message", () => {
    const frame = deny();
    delete frame.payload.decision.message;
    expectRejected(frame, "payload.decision.message");
  });

  it("rejects a decision behavior other than allow or deny", () => {
    const frame = deny();
    frame.payload.decision.behavior = "ask";
    expectRejected(frame, "payload.decision.behavior");
  });

  it("rejects an allow decision whose updated_input is not an object, and accepts null", () => {
    const frame = allow();
    frame.payload.decision.updated_input = null;
    expectAccepted(frame);
    frame.payload.decision.updated_input = "city=Paris";
    expectRejected(frame, "payload.decision.updated_input");
  });

  it("rejects selected_permission_suggestion_ids that are not strings", () => {
    const frame = allow();
    frame.payload.decision.selected_permission_suggestion_ids = [1];
    expectRejected(frame, "payload.decision.selected_permission_suggestion_ids[0]");
  });
});

describe("sync, abort_message, app_server_info", () => {
  it("rejects a sync without a runtime", () => {
    const frame = fixture("wire/outbound", "sync");
    delete frame.runtime;
    expectRejected(frame, "runtime");
  });

  it("rejects a sync whose recover_approvals is not a boolean", () => {
    const frame = fixture("wire/outbound", "sync");
    frame.recover_approvals = "true";
    expectRejected(frame, "recover_approvals");
  });

  it("rejects an abort_message whose run_id is a number, and accepts null", () => {
    const frame = fixture("wire/outbound", "abort-message");
    expectAccepted(frame);
    frame.run_id = 3;
    expectRejected(frame, "run_id");
  });

  it("rejects an app_server_info with an empty request_id", () => {
    const frame = fixture("wire/outbound", "app-server-info");
    frame.request_id = "";
    expectRejected(frame, "request_id");
  });
});

describe("relay frames", () => {
  it.each([
    ["a string", "101"],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["missing", undefined],
  ])("rejects an ack whose seq is %s", (_label, seq) => {
    expectRejected({ type: "ack", seq }, "seq");
  });

  it("rejects a ping with extra fields", () => {
    expectRejected({ type: "ping", at: 1 }, 'Unrecognized key: "at"');
  });
});

describe("encodeFrame in general", () => {
  it("rejects an unknown frame type", () => {
    expectRejected({ type: "message", agentId: "a", messages: [] }, 'unknown outbound frame type "message"');
  });

  it.each([
    ["null", null],
    ["an array", [{ type: "ping" }]],
    ["a string", '{"type":"ping"}'],
  ])("rejects a frame that is %s", (_label, frame) => {
    expect(rejection(frame)).toMatchObject({ code: "INVALID_FRAME" });
  });

  it("rejects a frame without a string type", () => {
    expectRejected({ request_id: "r" }, 'frame has no string "type"');
  });

  it("rejects a cyclic parameters object with INVALID_FRAME (not a TypeError)", () => {
    const frame = fixture("wire/outbound", "runtime-start-no-tools");
    const parameters: Record<string, unknown> = { type: "object" };
    parameters.self = parameters;
    frame.external_tools = [{ tools: [{ name: "loop", description: "cyclic", parameters }] }];
    const error = rejection(frame);
    expect(error).toMatchObject({ code: "INVALID_FRAME" });
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it("rejects a BigInt inside parameters with INVALID_FRAME", () => {
    const frame = fixture("wire/outbound", "runtime-start-no-tools");
    frame.external_tools = [{ tools: [{ name: "big", description: "bigint", parameters: { maximum: 10n } }] }];
    expect(rejection(frame)).toMatchObject({ code: "INVALID_FRAME" });
  });

  it("reports at most three problems and counts the rest", () => {
    const frame = fixture("wire/outbound", "runtime-start-no-tools");
    Object.assign(frame, { mode: 1, cwd: 2, wait_for_replay: 3, recover_approvals: 4, force_device_status: 5 });
    expect(rejection(frame).message).toMatch(/; and 2 more$/);
  });

  it("returns exactly JSON.stringify of the frame it was given", () => {
    const frame = fixture("wire/outbound", "runtime-start-create-agent") as OutboundFrame;
    expect(encodeFrame(frame)).toBe(JSON.stringify(frame));
  });
});
