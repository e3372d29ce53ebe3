/**
 * One `tool-result` event per result of a `tool_return_message`, whichever shape it has
 * (docs/protocol.md#stream_delta): the backend-streamed shape (only `tool_returns`, built from the
 * runtime's source), the synthetic one (recorded from the real peer), a mixed one, and one with a
 * malformed entry — through `eventsFromDelta` and through a whole session, where a delta without
 * any usable result is reported as INVALID_FRAME and the turn goes on.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type ToolrelayError } from "../../packages/toolrelay/src/index.js";
import { eventsFromDelta } from "../../packages/toolrelay/src/session/turn-events.js";
import type { StreamDelta } from "../../packages/toolrelay/src/wire/index.js";
import { fixture } from "../wire/load-fixtures.js";
import { scriptedRuntime, sessionOn } from "./session-support.js";

const fromSource = fixture("runtime-source", "tool-return-message-backend-streamed-from-runtime-source") as {
  frames: Record<"one-result" | "two-results", { delta: Record<string, unknown> }>;
};
const oneResult = fromSource.frames["one-result"].delta as StreamDelta;
const twoResults = fromSource.frames["two-results"].delta as StreamDelta;

const names: Record<string, string> = { call_fetch_1: "fetch_page", call_fetch_2: "fetch_page", call_a: "lookup" };
const isClientTool = (name: string) => name === "lookup";
const toolNameOf = (toolCallId: string) => names[toolCallId];

describe("eventsFromDelta and tool_returns", () => {
  it("a backend-streamed delta with one result: one tool-result, named by the delta", () => {
    expect(eventsFromDelta(oneResult, isClientTool, toolNameOf)).toEqual([
      {
        type: "tool-result",
        toolCallId: "call_search_1",
        toolName: "web_search",
        isError: false,
        text: '3 results for "letta code"',
        owner: "runtime",
      },
    ]);
  });

  it("a backend-streamed delta with two results: two tool-results in order, each with its status, named by its call", () => {
    expect(eventsFromDelta(twoResults, isClientTool, toolNameOf)).toEqual([
      {
        type: "tool-result",
        toolCallId: "call_fetch_1",
        toolName: "fetch_page",
        isError: false,
        text: "<title>Letta</title>",
        owner: "runtime",
      },
      {
        type: "tool-result",
        toolCallId: "call_fetch_2",
        toolName: "fetch_page",
        isError: true,
        text: "HTTP 404 for https://example.invalid/missing",
        owner: "runtime",
      },
    ]);
  });

  it("the synthetic shape recorded from the real peer: one tool-result, not one per copy", () => {
    const delta = (fixture("real-peer", "inbound-stream_delta-tool_return_message") as { delta: StreamDelta }).delta;
    const events = eventsFromDelta(
      delta,
      () => true,
      () => "get_weather",
    );
    expect(events).toEqual([
      { type: "tool-result", toolCallId: "call_1", toolName: "get_weather", isError: false, text: "Sunny, 21 °C", owner: "client" },
    ]);
  });

  it("a mixed delta (a top-level result for another call than the entries): one tool-result per call", () => {
    const delta = {
      message_type: "tool_return_message",
      id: "m-1",
      name: "ignored_with_two_results",
      tool_call_id: "call_fetch_2",
      status: "error",
      tool_return: "gone",
      tool_returns: [{ tool_call_id: "call_a", status: "success", tool_return: [{ type: "text", text: "found" }] }],
    } as StreamDelta;
    expect(eventsFromDelta(delta, isClientTool, toolNameOf)).toEqual([
      { type: "tool-result", toolCallId: "call_a", toolName: "lookup", isError: false, text: "found", owner: "client" },
      { type: "tool-result", toolCallId: "call_fetch_2", toolName: "fetch_page", isError: true, text: "gone", owner: "runtime" },
    ]);
  });

  it("a malformed entry is skipped; the others still give their events", () => {
    const delta = {
      message_type: "tool_return_message",
      id: "m-2",
      tool_returns: [{ tool_call_id: "call_fetch_1", status: "success", tool_return: "ok" }, { tool_return: "whose?" }, 5],
    } as StreamDelta;
    expect(eventsFromDelta(delta, isClientTool, toolNameOf)).toEqual([
      { type: "tool-result", toolCallId: "call_fetch_1", toolName: "fetch_page", isError: false, text: "ok", owner: "runtime" },
    ]);
  });

  it("a streamed snapshot with tool_returns only: tool-output events, one per entry", () => {
    const delta = {
      message_type: "tool_return_message",
      id: "synthetic-tool-return-stream-call_fetch_1",
      tool_returns: [{ tool_call_id: "call_fetch_1", status: "success", tool_return: "line1" }],
    } as StreamDelta;
    expect(eventsFromDelta(delta, isClientTool, toolNameOf)).toEqual([
      { type: "tool-output", toolCallId: "call_fetch_1", toolName: "fetch_page", text: "line1", owner: "runtime" },
    ]);
  });
});

describe("a session and backend-streamed results", () => {
  interface EmitsDeltas {
    emitDelta(delta: Record<string, unknown>): void;
  }

  it("two results in one delta become two tool-results of the turn; a delta with none is INVALID_FRAME and the turn goes on", async () => {
    const lookup = defineTool({ name: "lookup", description: "Looks up", inputSchema: z.object({}), execute: () => "x" });
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        await turn.say("Fetching. ");
        const emitter = turn as unknown as EmitsDeltas;
        emitter.emitDelta({ ...(twoResults as Record<string, unknown>), run_id: turn.runId });
        emitter.emitDelta({ message_type: "tool_return_message", id: "m-bad", run_id: turn.runId, tool_returns: [{ status: "success" }] });
        await turn.say("Done.");
      },
    });
    const session = await sessionOn(runtime, { tools: [lookup] });
    const errors: ToolrelayError[] = [];
    session.on("error", (error) => errors.push(error));
    const result = await session.send("fetch both").result;

    expect(result.stopReason).toBe("end_turn");
    expect(result.text).toBe("Fetching. Done.");
    const results = result.events.filter((event) => event.type === "tool-result");
    expect(results).toEqual([
      expect.objectContaining({ toolCallId: "call_fetch_1", isError: false, text: "<title>Letta</title>", owner: "runtime" }),
      expect.objectContaining({
        toolCallId: "call_fetch_2",
        isError: true,
        text: "HTTP 404 for https://example.invalid/missing",
        owner: "runtime",
      }),
    ]);
    expect(errors).toEqual([expect.objectContaining({ code: "INVALID_FRAME", message: expect.stringContaining("delta.tool_returns") })]);
  });
});
