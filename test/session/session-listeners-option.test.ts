/**
 * `createSession({ on })`: listeners attached before the session connects see the calls that
 * settle while `createSession` runs (a runtime that offers a call at once, as a relay re-offers an
 * unanswered one to a new session), which a listener added after `createSession` resolved would
 * miss. Over a real WebSocket on loopback (a bare app-server stand-in).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type ToolCallEndEvent } from "../../packages/toolrelay/src/index.js";
import { rawRuntime } from "./session-support.js";

const RUNTIME = { agent_id: "agent-1", conversation_id: "conv-1" };

describe("createSession({ on })", () => {
  it("a tool-call-end listener given as an option sees a call that settled before createSession resolved", async () => {
    const server = await rawRuntime((frame, reply) => {
      if (frame.type !== "runtime_start") return;
      // The call comes first, then the registration's answer: it settles while createSession runs.
      reply({
        type: "external_tool_call_request",
        request_id: "reoffered-1",
        runtime: RUNTIME,
        tool_call_id: "call_1",
        tool_name: "echo",
        input: { text: "hi" },
      });
      reply({ type: "runtime_start_response", request_id: frame.request_id, success: true, runtime: RUNTIME });
    });
    const echo = defineTool({
      name: "echo",
      description: "Echo",
      inputSchema: z.object({ text: z.string() }),
      execute: ({ text }) => text,
    });
    const ends: Array<{ event: ToolCallEndEvent; beforeResolved: boolean }> = [];
    let resolved = false;
    const session = await createSession({
      backend: { kind: "local", url: server.url, pingIntervalMs: 0 },
      agent: { id: "agent-1" },
      conversation: "conv-1",
      tools: [echo],
      on: { "tool-call-end": (event) => ends.push({ event, beforeResolved: !resolved }) },
    });
    resolved = true;
    const late: ToolCallEndEvent[] = [];
    session.on("tool-call-end", (event) => late.push(event));
    await expect.poll(() => ends.length).toBe(1);
    expect(ends[0]).toMatchObject({ beforeResolved: true, event: { toolName: "echo", toolCallId: "call_1", outcome: "ok", output: "hi" } });
    expect(late).toEqual([]);
    await session.close();
  });
});
