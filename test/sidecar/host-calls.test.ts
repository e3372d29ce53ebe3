import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ToolCallAbortError } from "../../packages/toolrelay/src/tools/index.js";
import {
  HostCalls,
  HostToolError,
  REMEMBERED_FINISHED_CALLS,
  type HostCallRequest,
} from "../../packages/toolrelay/src/sidecar/host-calls.js";
import type { SidecarFrame } from "../../packages/toolrelay/src/sidecar/sidecar-frames.js";

function harness() {
  const sent: SidecarFrame[] = [];
  const calls = new HostCalls((frame) => sent.push(frame));
  const request = (signal: AbortSignal, session = "s"): HostCallRequest => ({
    session,
    turn: "t",
    tool: "echo",
    input: { a: 1 },
    timeoutMs: 1_000,
    context: {
      signal,
      toolCallId: "call_0",
      agentId: "agent",
      conversationId: "conv",
      idempotencyKey: "tr1_test",
      progress: () => undefined,
    },
  });
  return { sent, calls, request };
}

describe("HostCalls", () => {
  it("sends tool_call with the input as given and settles with the host's result", async () => {
    const { sent, calls, request } = harness();
    const controller = new AbortController();
    const result = calls.run(request(controller.signal));
    expect(sent).toEqual([
      {
        type: "tool_call",
        session: "s",
        call: "call-1",
        turn: "t",
        tool: "echo",
        tool_call_id: "call_0",
        agent_id: "agent",
        conversation_id: "conv",
        input: { a: 1 },
        timeout_ms: 1_000,
      },
    ]);
    expect(calls.answer("s", "call-1", { kind: "result", result: { content: [{ type: "text", text: "x" }] } })).toBe("answered");
    await expect(result).resolves.toEqual({ content: [{ type: "text", text: "x" }] });
    expect(calls.pendingCount).toBe(0);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(calls.answer("s", "call-1", { kind: "error", message: "again" })).toBe("late");
  });

  it("rejects with the host's tool_error message", async () => {
    const { calls, request } = harness();
    const result = calls.run(request(new AbortController().signal));
    calls.answer("s", "call-1", { kind: "error", message: "boom" });
    await expect(result).rejects.toThrow(HostToolError);
    await expect(result).rejects.toThrow("boom");
  });

  it("an abort sends cancel with the reason's kind, removes the listener, and a later answer is late", async () => {
    const { sent, calls, request } = harness();
    const controller = new AbortController();
    const result = calls.run(request(controller.signal));
    controller.abort(ToolCallAbortError.timeout(1_000));
    await expect(result).rejects.toMatchObject({ kind: "timeout" });
    expect(sent.at(-1)).toEqual({
      type: "cancel",
      session: "s",
      call: "call-1",
      reason: "timeout",
      message: "The tool call timed out after 1000 ms.",
    });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(calls.answer("s", "call-1", { kind: "result", result: { content: [] } })).toBe("late");
  });

  it("an answer from another session or for no call is unknown and settles nothing", async () => {
    const { calls, request } = harness();
    const pending = calls.run(request(new AbortController().signal, "a"));
    expect(calls.answer("b", "call-1", { kind: "error", message: "x" })).toBe("unknown");
    expect(calls.answer("a", "call-9", { kind: "error", message: "x" })).toBe("unknown");
    expect(calls.pendingCount).toBe(1);
    calls.abandon("the host is gone");
    expect(calls.pendingCount).toBe(0);
    await expect(pending).rejects.toThrow("the host is gone");
  });

  it("an already aborted signal sends nothing; finished ids are remembered up to the bound", async () => {
    const { sent, calls, request } = harness();
    const controller = new AbortController();
    controller.abort(ToolCallAbortError.cancelled("x"));
    await expect(calls.run(request(controller.signal))).rejects.toMatchObject({ kind: "cancelled" });
    expect(sent).toEqual([]);
    const signal = new AbortController().signal;
    for (let index = 0; index < REMEMBERED_FINISHED_CALLS + 10; index++) {
      void calls.run(request(signal)).catch(() => undefined);
      calls.answer("s", `call-${index + 1}`, { kind: "error", message: "x" });
    }
    expect(calls.answer("s", "call-1", { kind: "error", message: "x" })).toBe("unknown");
    expect(calls.answer("s", `call-${REMEMBERED_FINISHED_CALLS + 10}`, { kind: "error", message: "x" })).toBe("late");
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });
});
