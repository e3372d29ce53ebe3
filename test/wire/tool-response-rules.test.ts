/**
 * docs/protocol.md#external_tool_call_response / docs/protocol.md#silent-drops: an `external_tool_call_response` the runtime would
 * drop (so the call would hang for 5 minutes) is refused by encodeFrame; so are
 * the shapes whose content the runtime would silently throw away.
 */
import { describe, expect, it } from "vitest";
import { encodeFrame, type OutboundFrame } from "../../packages/toolrelay/src/wire/index.js";
import { expectAccepted, expectRejected, rejection } from "./reject.js";
import { fixture } from "./load-fixtures.js";

// biome-ignore lint/suspicious/noExplicitAny: a test reads a decoded frame's nested fields without declaring every shape
type Frame = Record<string, any>;
const resultFrame = (): Frame => fixture("wire/outbound", "external-tool-call-response-result");
const errorFrame = (): Frame => fixture("wire/outbound", "external-tool-call-response-error");

describe("external_tool_call_response: the runtime's own rules", () => {
  it("rejects a request_id that is not a string", () => {
    const frame = resultFrame();
    frame.request_id = 12;
    expectRejected(frame, "request_id: Invalid input: expected string");
  });

  it("rejects an error that is not a string", () => {
    const frame = errorFrame();
    frame.error = { message: "boom" };
    expectRejected(frame, "error: Invalid input: expected string");
  });

  it("rejects a frame with neither result nor error", () => {
    const frame = errorFrame();
    delete frame.error;
    expectRejected(frame, "needs either result or error");
  });

  it("rejects a result that is not an object", () => {
    const frame = resultFrame();
    frame.result = "Sunny";
    expectRejected(frame, "result: Invalid input: expected object");
  });

  it("rejects result.content that is not an array", () => {
    const frame = resultFrame();
    frame.result.content = { type: "text", text: "Sunny" };
    expectRejected(frame, "result.content: Invalid input: expected array");
  });

  it.each([
    ["a string", "Sunny"],
    ["null", null],
    ["an array", [{ type: "text", text: "x" }]],
  ])("rejects a content item that is %s", (_label, item) => {
    const frame = resultFrame();
    frame.result.content.push(item);
    expectRejected(frame, "result.content[1]: Invalid input: expected object");
  });

  it("rejects an is_error that is not a boolean", () => {
    const frame = resultFrame();
    frame.result.is_error = "true";
    expectRejected(frame, "result.is_error: Invalid input: expected boolean");
  });
});

describe("external_tool_call_response: shapes the runtime accepts but would mangle", () => {
  it("rejects result and error together (the runtime silently prefers error)", () => {
    const frame = resultFrame();
    frame.error = "also failed";
    expectRejected(frame, "error: send either result or error, not both");
  });

  it("rejects a content block of an unknown type (the runtime drops it)", () => {
    const frame = resultFrame();
    frame.result.content = [{ type: "json", value: { a: 1 } }];
    expectRejected(frame, 'result.content[0].type: Invalid input: expected "text" or "image"');
  });

  it("rejects a text block without a string text", () => {
    const frame = resultFrame();
    frame.result.content = [{ type: "text", content: "Sunny" }];
    expectRejected(frame, "result.content[0].text: Invalid input: expected string");
  });

  it("rejects an image block without data or mimeType", () => {
    const frame = fixture("wire/outbound", "external-tool-call-response-image") as Frame;
    delete frame.result.content[1].mimeType;
    expectRejected(frame, "result.content[1].mimeType");
    frame.result.content[1] = { type: "image", mimeType: "image/png" };
    expectRejected(frame, "result.content[1].data");
  });

  it("rejects isError spelled in camelCase (the model would see a success)", () => {
    const frame = resultFrame();
    frame.result.isError = true;
    expectRejected(frame, 'result: Unrecognized key: "isError"');
  });

  it("rejects an unknown top-level key", () => {
    const frame = resultFrame();
    frame.tool_call_id = "call_1";
    expectRejected(frame, 'Unrecognized key: "tool_call_id"');
  });

  it("accepts an empty content array and is_error false", () => {
    const frame = resultFrame();
    frame.result = { content: [], is_error: false };
    expectAccepted(frame);
  });

  it("never puts the result text into the error message", () => {
    const frame = resultFrame();
    frame.result.content = [
      { type: "text", text: "secret-token-123" },
      { type: "text", text: 5 },
    ];
    frame.result.is_error = "secret-token-456";
    const error = rejection(frame);
    expect(error.message).not.toContain("secret-token");
  });

  it("stringifies exactly the given frame", () => {
    const frame = fixture("wire/outbound", "external-tool-call-response-image") as OutboundFrame;
    expect(encodeFrame(frame)).toBe(JSON.stringify(frame));
  });
});
