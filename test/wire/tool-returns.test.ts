/**
 * Both shapes of a `tool_return_message` decode (docs/protocol.md#stream_delta): the runtime's
 * synthetic one (top-level fields and one `tool_returns` entry, as recorded from the real peer)
 * and the backend-streamed one (only `tool_returns`), whose fixture is built from the runtime's
 * source because the local backend never streams it. An unusable entry is skipped; a delta with no
 * usable result is invalid with a message that says why.
 */
import { describe, expect, it } from "vitest";
import { decodeFrame, streamDeltaSchema } from "../../packages/toolrelay/src/wire/index.js";
import { toolReturnsOf, toolReturnText } from "../../packages/toolrelay/src/wire/tool-returns.js";
import { fixture } from "./load-fixtures.js";

const fromSource = fixture("runtime-source", "tool-return-message-backend-streamed-from-runtime-source") as {
  source: string;
  frames: Record<"one-result" | "two-results", Record<string, unknown> & { delta: Record<string, unknown> }>;
};

function decodedDelta(frame: unknown): Record<string, unknown> {
  const decoded = decodeFrame(JSON.stringify(frame));
  if (decoded.kind !== "frame" || decoded.frame.type !== "stream_delta") throw new Error(`not decoded: ${JSON.stringify(decoded)}`);
  return decoded.frame.delta as Record<string, unknown>;
}

describe("a tool_return_message of the backend-streamed shape (built from the runtime's source)", () => {
  it("names where it comes from, and has no top-level result: only tool_returns", () => {
    expect(fromSource.source).toContain("normalizeToolReturnWireMessage");
    for (const frame of Object.values(fromSource.frames)) {
      expect(frame.delta).not.toHaveProperty("tool_call_id");
      expect(frame.delta).not.toHaveProperty("status");
      expect(frame.delta).not.toHaveProperty("tool_return");
    }
  });

  it("decodes as it came, with one result", () => {
    const frame = fromSource.frames["one-result"];
    const delta = decodedDelta(frame);
    expect(delta).toEqual(frame.delta);
    expect(toolReturnsOf(delta)).toEqual({
      entries: [{ toolCallId: "call_search_1", status: "success", toolReturn: '3 results for "letta code"' }],
      skipped: 0,
    });
  });

  it("decodes with two results, in order, each with its own status", () => {
    const delta = decodedDelta(fromSource.frames["two-results"]);
    expect(toolReturnsOf(delta).entries).toEqual([
      { toolCallId: "call_fetch_1", status: "success", toolReturn: "<title>Letta</title>" },
      { toolCallId: "call_fetch_2", status: "error", toolReturn: "HTTP 404 for https://example.invalid/missing" },
    ]);
  });
});

describe("a tool_return_message of the synthetic shape (recorded from the real peer)", () => {
  it("is one result, though both the top level and tool_returns carry it", () => {
    const delta = decodedDelta(fixture("real-peer", "inbound-stream_delta-tool_return_message"));
    expect(toolReturnsOf(delta)).toEqual({
      entries: [{ toolCallId: "call_1", status: "success", toolReturn: "Sunny, 21 °C" }],
      skipped: 0,
    });
  });

  it("without tool_returns (older runtimes, hand-written fixtures) is the top-level result", () => {
    const delta = decodedDelta(fixture("wire/inbound", "stream-delta-tool-return-message"));
    expect(toolReturnsOf(delta).entries).toEqual([{ toolCallId: "call_7Yx2", status: "success", toolReturn: "Sunny, 21 °C" }]);
  });
});

describe("mixed and malformed tool_return_messages", () => {
  const base = { message_type: "tool_return_message", id: "m-1" };

  it("a top-level result for another call than the entries: every result once, the entries first", () => {
    const delta = {
      ...base,
      tool_call_id: "call_top",
      status: "error",
      tool_return: "top",
      tool_returns: [{ tool_call_id: "call_a", status: "success", tool_return: "a" }],
    };
    expect(streamDeltaSchema.safeParse(delta).success).toBe(true);
    expect(toolReturnsOf(delta).entries.map((entry) => entry.toolCallId)).toEqual(["call_a", "call_top"]);
  });

  it("an unusable entry is skipped and counted; the usable ones remain", () => {
    const delta = {
      ...base,
      tool_returns: [
        { tool_call_id: "call_a", status: "success", tool_return: "a" },
        { status: "success", tool_return: "no id" },
        { tool_call_id: "call_c", status: "done", tool_return: "bad status" },
        "not an object",
        null,
        { tool_call_id: 7, status: "error" },
        { tool_call_id: "call_g", status: "error" },
      ],
    };
    expect(streamDeltaSchema.safeParse(delta).success).toBe(true);
    expect(toolReturnsOf(delta)).toEqual({
      entries: [
        { toolCallId: "call_a", status: "success", toolReturn: "a" },
        { toolCallId: "call_g", status: "error", toolReturn: undefined },
      ],
      skipped: 5,
    });
  });

  it.each([
    ["no result at all", {}, "tool_call_id", "needs"],
    ["an empty tool_returns", { tool_returns: [] }, "tool_call_id", "needs"],
    ["only unusable entries", { tool_returns: [{ status: "success" }, 42] }, "tool_returns", "no entry of tool_returns"],
    ["a top-level id without a status", { tool_call_id: "call_1", tool_return: "x" }, "tool_call_id", "needs"],
  ])("a delta with %s is invalid and says why", (_what, fields, path, words) => {
    const frame = { type: "stream_delta", delta: { ...base, ...fields } };
    const decoded = decodeFrame(JSON.stringify(frame));
    expect(decoded.kind).toBe("invalid");
    if (decoded.kind !== "invalid") return;
    expect(decoded.error).toContain(`delta.${path}`);
    expect(decoded.error).toContain(words);
  });

  it("a mistyped tool_returns or top-level field is still refused", () => {
    expect(streamDeltaSchema.safeParse({ ...base, tool_returns: "call_1" }).success).toBe(false);
    expect(streamDeltaSchema.safeParse({ ...base, tool_returns: [{ tool_call_id: "c", status: "success" }], status: "done" }).success).toBe(
      false,
    );
  });
});

describe("toolReturnText (the runtime's rule)", () => {
  it.each([
    ["a string", "plain", "plain"],
    ["text parts, joined with a newline", [{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }], "a\nb"],
    ["one text part", { type: "text", text: "only" }, "only"],
    ["nothing", undefined, ""],
    ["null", null, ""],
    ["anything else, as JSON", [{ type: "image", data: "QUJD" }], '[{"type":"image","data":"QUJD"}]'],
  ])("%s", (_what, value, text) => {
    expect(toolReturnText(value)).toBe(text);
  });

  it("never throws, even for a value JSON cannot write", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(toolReturnText(cyclic)).toBe("[object Object]");
    expect(toolReturnText(10n)).toBe("10");
  });
});
