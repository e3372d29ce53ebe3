/**
 * The text of a client tool's `tool-result`: what the SDK sent the model when the runtime's copy
 * shows that the model got it, else the runtime's copy (a call the runtime settled itself, a text
 * the runtime clamped again). integration/tool-result-text-real-peer.test.ts runs it against the
 * real app-server.
 */
import { describe, expect, it } from "vitest";
import { clientToolResultText } from "../../packages/toolrelay/src/session/client-tool-result-text.js";
import { eventsFromDelta } from "../../packages/toolrelay/src/session/turn-events.js";
import { clampToolText } from "../../packages/toolrelay/src/tools/index.js";
import type { StreamDelta, ToolCallResponseBody } from "../../packages/toolrelay/src/wire/index.js";

/** The runtime's stream copy of a long text (`truncateInterruptToolReturn`: 15,000 + 15,000 and its notice). */
function runtimeCut(text: string): string {
  return `${text.slice(0, 15_000)}\n... [${text.length - 30_000} characters omitted] ...\n${text.slice(-15_000)}\n\n[Output truncated: showing 30,000 of ${text.length} characters.]`;
}

const text = (value: string, isError?: boolean): ToolCallResponseBody => ({
  result: { content: [{ type: "text", text: value }], ...(isError === undefined ? {} : { is_error: isError }) },
});
const LONG = clampToolText("x".repeat(20_000) + "y".repeat(20_000), 32_000);
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const image = { type: "image" as const, data: PIXEL, mimeType: "image/png" };
const imageJson = JSON.stringify([{ type: "image", source: { type: "base64", media_type: "image/png", data: PIXEL } }]);

describe("clientToolResultText", () => {
  it("a text the runtime cut: the SDK's text, one notice", () => {
    expect(LONG.length).toBe(32_000);
    const copy = runtimeCut(LONG);
    expect(clientToolResultText(text(LONG), copy, false)).toBe(LONG);
    expect(LONG.match(/\[Output truncated/g)).toHaveLength(1);
  });

  it("a short text the runtime copied as it is: that text", () => {
    expect(clientToolResultText(text("ok"), "ok", false)).toBe("ok");
  });

  it("text blocks joined with a newline, as the runtime joins them", () => {
    const body: ToolCallResponseBody = {
      result: {
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
    };
    expect(clientToolResultText(body, "a\nb", false)).toBe("a\nb");
  });

  it("an image-only result: a description of the image, not the runtime's base64 JSON", () => {
    const shown = clientToolResultText({ result: { content: [image] } }, imageJson, false);
    expect(shown).toBe(`[image: image/png, ${Buffer.from(PIXEL, "base64").length} bytes]`);
    expect(shown).not.toContain(PIXEL.slice(0, 16));
  });

  it("text and an image: the text and the image's description, in order", () => {
    const body: ToolCallResponseBody = { result: { content: [{ type: "text", text: "The chart:" }, image] } };
    expect(clientToolResultText(body, "The chart:", false)).toBe(`The chart:\n[image: image/png, 70 bytes]`);
  });

  it("an error answer reads as the runtime wraps it", () => {
    const body: ToolCallResponseBody = { error: "Tool call cancelled: the turn was aborted" };
    const wrapped = "External tool execution error: Tool call cancelled: the turn was aborted";
    expect(clientToolResultText(body, wrapped, true)).toBe(wrapped);
  });

  it("is_error: the SDK's text with the error status", () => {
    expect(clientToolResultText(text(LONG, true), runtimeCut(LONG), true)).toBe(LONG);
  });

  describe("keeps the runtime's copy when the model did not get the SDK's answer", () => {
    const cases: Array<[string, ToolCallResponseBody | undefined, string, boolean]> = [
      ["nothing was written", undefined, "External tool execution error: Listener connection closed", true],
      [
        "the runtime timed the call out itself",
        text("late answer"),
        "External tool execution error: External tool call timed out: t",
        true,
      ],
      ["the runtime interrupted it", text("done"), "Interrupted by user", true],
      ["the statuses differ", text("fine", false), "fine", true],
      ["an error answer, but a success", { error: "boom" }, "External tool execution error: boom", false],
      ["another short text", text("answer A"), "answer B", false],
      ["an image answer, but a text copy without its data", { result: { content: [image] } }, "something else", false],
    ];
    it.each(cases)("%s", (_what, sent, runtimeText, isError) => {
      expect(clientToolResultText(sent, runtimeText, isError)).toBe(runtimeText);
    });

    it("a text over the runtime's own 32,000 (maxResultChars raised): the runtime clamped it again", () => {
      const huge = "z".repeat(50_000);
      const copy = runtimeCut(huge);
      expect(clientToolResultText(text(huge), copy, false)).toBe(copy);
    });

    it("a long text whose beginning the runtime's copy does not repeat", () => {
      expect(clientToolResultText(text(LONG), runtimeCut("w".repeat(40_000)), false)).toBe(runtimeCut("w".repeat(40_000)));
    });
  });
});

describe("eventsFromDelta with the SDK's responses", () => {
  const delta = (toolCallId: string, toolReturn: string, id = "synthetic-tool-return-1"): StreamDelta =>
    ({ message_type: "tool_return_message", id, tool_call_id: toolCallId, status: "success", tool_return: toolReturn }) as StreamDelta;
  const names: Record<string, string> = { call_client: "long_report", call_runtime: "Bash" };
  const isClientTool = (name: string) => name === "long_report";
  const sent = (toolCallId: string) => (toolCallId === "call_client" || toolCallId === "call_runtime" ? text(LONG) : undefined);

  it("a client tool's tool-result carries the SDK's text", () => {
    const [event] = eventsFromDelta(delta("call_client", runtimeCut(LONG)), isClientTool, (id) => names[id], sent);
    expect(event).toMatchObject({ type: "tool-result", owner: "client", text: LONG });
  });

  it("a runtime tool's tool-result, and any tool-output, stay the runtime's", () => {
    const [runtime] = eventsFromDelta(delta("call_runtime", runtimeCut(LONG)), isClientTool, (id) => names[id], sent);
    expect(runtime).toMatchObject({ type: "tool-result", owner: "runtime", text: runtimeCut(LONG) });
    const snapshot = delta("call_client", "partial", "synthetic-tool-return-stream-call_client");
    const [output] = eventsFromDelta(snapshot, isClientTool, (id) => names[id], sent);
    expect(output).toMatchObject({ type: "tool-output", owner: "client", text: "partial" });
  });

  it("without a lookup (the default), the runtime's copy", () => {
    const [event] = eventsFromDelta(delta("call_client", runtimeCut(LONG)), isClientTool, (id) => names[id]);
    expect(event).toMatchObject({ type: "tool-result", owner: "client", text: runtimeCut(LONG) });
  });
});
