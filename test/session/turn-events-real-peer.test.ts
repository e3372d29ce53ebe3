/**
 * Turn events from frames the real Letta Code 0.32.18 app-server sent (test/fixtures/real-peer/unkind,
 * written by integration/support/record-unkind-peer-fixtures.ts), replayed through the TurnTracker:
 * a subagent's deltas (on the parent's scope, with `subagent_id`) never become the parent's text,
 * tool calls or stop reason, and a runtime tool's streamed snapshots give one `tool-result`.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { Turn, type TurnResult } from "../../packages/toolrelay/src/session/turn.js";
import { TurnTracker } from "../../packages/toolrelay/src/session/turn-tracker.js";
import { decodeFrame, type RuntimeScope } from "../../packages/toolrelay/src/wire/index.js";

interface Entry {
  client: string;
  direction: "inbound" | "outbound";
  frame: Record<string, unknown>;
}

function transcript(name: string): Entry[] {
  return JSON.parse(readFileSync(new URL(`../fixtures/real-peer/unkind/${name}.json`, import.meta.url), "utf8")) as Entry[];
}

/** Replay one recorded turn of client A: begin at its `input`, feed every inbound frame after it. */
async function replayTurn(name: string): Promise<TurnResult> {
  const entries = transcript(name).filter((entry) => entry.client === "A");
  const inputIndex = entries.findIndex((entry) => entry.direction === "outbound" && entry.frame.type === "input");
  const input = entries[inputIndex]!.frame as { runtime: RuntimeScope; payload: { messages: Array<{ client_message_id: string }> } };
  const tracker = new TurnTracker({
    timers: systemTimers,
    runtime: () => input.runtime,
    isClientTool: (toolName) => toolName === "get_weather",
    pendingCalls: () => 0,
    probe: () => undefined,
    stallProbeMs: 0,
  });
  const turn = Turn.create(async () => undefined);
  tracker.begin(turn, input.payload.messages[0]!.client_message_id);
  for (const entry of entries.slice(inputIndex + 1)) {
    if (entry.direction !== "inbound") continue;
    const decoded = decodeFrame(JSON.stringify(entry.frame));
    if (decoded.kind !== "frame") continue;
    const frame = decoded.frame;
    if (frame.type === "stream_delta") tracker.onDelta(frame);
    else if (frame.type === "update_loop_status") tracker.onLoopStatus(frame);
    else if (frame.type === "turn_finished") tracker.onTurnFinished(frame);
  }
  tracker.stop();
  return turn.result;
}

describe("turn events from the real peer's frames", () => {
  it("a subagent's deltas (Agent tool) become subagent events, never the parent's text, tool calls or stop reason", async () => {
    const result = await replayTurn("subagent-during-turn");
    const subagentFrames = transcript("subagent-during-turn").filter((entry) => typeof entry.frame.subagent_id === "string");
    expect(subagentFrames.length).toBeGreaterThan(0); // the fixture really has them, on the parent's scope

    expect(result.text).toBe("delegatingparent done");
    expect(result.text).not.toContain("subagent");
    expect(result.stopReason).toBe("end_turn");
    const own = result.events.filter((event) => event.type !== "subagent");
    expect(own.filter((event) => event.type === "tool-call").map((event) => event.type === "tool-call" && event.toolName)).toEqual([
      "Agent",
    ]);
    expect(own.filter((event) => event.type === "tool-result")).toHaveLength(1);

    const subagent = result.events.filter((event) => event.type === "subagent");
    expect(subagent.length).toBeGreaterThan(0);
    const subagentId = subagentFrames[0]!.frame.subagent_id;
    expect(subagent.every((event) => event.type === "subagent" && event.subagentId === subagentId)).toBe(true);
    expect(subagent.map((event) => event.type === "subagent" && event.event.type)).toEqual([
      "assistant",
      "tool-call",
      "tool-result",
      "assistant",
    ]);
    expect(subagent[0]).toMatchObject({ event: { type: "assistant", text: "subagent text before its tool" } });
    expect(subagent[1]).toMatchObject({ event: { type: "tool-call", toolName: "Bash", owner: "runtime" } });
    expect(subagent[2]).toMatchObject({ event: { type: "tool-result", toolName: "Bash", text: "from-subagent\n", owner: "runtime" } });
  });

  it("a runtime tool's growing snapshots become tool-output events and exactly one tool-result with the final text", async () => {
    const result = await replayTurn("bash-snapshots");
    const returns = transcript("bash-snapshots").filter(
      (entry) =>
        entry.frame.type === "stream_delta" && (entry.frame.delta as { message_type?: string }).message_type === "tool_return_message",
    );
    expect(returns.length).toBeGreaterThan(2); // several tool_return_message frames for one call

    const results = result.events.filter((event) => event.type === "tool-result");
    expect(results).toEqual([
      {
        type: "tool-result",
        toolCallId: "call_1",
        toolName: "Bash",
        isError: false,
        text: "line1\nline2\nline3\nline4\n",
        owner: "runtime",
      },
    ]);
    const outputs = result.events.filter((event) => event.type === "tool-output");
    expect(outputs.map((event) => event.type === "tool-output" && event.text)).toEqual([
      "line1",
      "line1\nline2",
      "line1\nline2\nline3",
      "line1\nline2\nline3\nline4",
    ]);
    const order = result.events.map((event) => event.type).filter((type) => type.startsWith("tool"));
    expect(order).toEqual(["tool-call", "tool-output", "tool-output", "tool-output", "tool-output", "tool-result"]);
    expect(result.stopReason).toBe("end_turn");
  });

  it("a turn waiting behind the runtime's own <task-notification> turn takes none of its text and does not end with it", async () => {
    const entries = transcript("subagent-during-turn").filter((entry) => entry.client === "A");
    const input = entries.find((entry) => entry.direction === "outbound" && entry.frame.type === "input")!.frame as {
      runtime: RuntimeScope;
    };
    const firstFinished = entries.findIndex((entry) => entry.frame.type === "turn_finished");
    const tracker = new TurnTracker({
      timers: systemTimers,
      runtime: () => input.runtime,
      isClientTool: () => false,
      pendingCalls: () => 0,
      probe: () => undefined,
      stallProbeMs: 0,
    });
    const feed = (slice: Entry[]) => {
      for (const entry of slice) {
        if (entry.direction !== "inbound") continue;
        const decoded = decodeFrame(JSON.stringify(entry.frame));
        if (decoded.kind !== "frame") continue;
        if (decoded.frame.type === "stream_delta") tracker.onDelta(decoded.frame);
        else if (decoded.frame.type === "update_loop_status") tracker.onLoopStatus(decoded.frame);
        else if (decoded.frame.type === "turn_finished") tracker.onTurnFinished(decoded.frame);
      }
    };
    feed(entries.slice(0, firstFinished + 1)); // the first turn's frames: the tracker learns its runs
    // The caller sends the next message now; the runtime is busy with its own notification turn.
    const next = Turn.create(async () => undefined);
    tracker.begin(next, "cm-next-message");
    const notification = entries.slice(firstFinished + 1);
    expect(notification.some((entry) => entry.frame.type === "turn_finished")).toBe(true);
    expect(JSON.stringify(notification)).toContain("parent saw the notification");
    feed(notification);
    expect(next.done).toBe(false); // the notification's turn_finished is not this turn's end
    next.finish("end_turn");
    const result = await next.result;
    expect(result.text).toBe("");
    expect(result.events).toEqual([{ type: "stop", stopReason: "end_turn" }]);
    tracker.stop();
  });

  it("a repeated final tool_return_message of one call is dropped; a reused tool_call_id in a new call gets its own result", async () => {
    const turn = Turn.create(async () => undefined);
    const call = (id: string) => ({ type: "tool-call" as const, toolCallId: id, toolName: "Bash", input: {}, owner: "runtime" as const });
    const result = (id: string, text: string) => ({
      type: "tool-result" as const,
      toolCallId: id,
      toolName: "Bash",
      isError: false,
      text,
      owner: "runtime" as const,
    });
    turn.push(call("call_0"));
    turn.push(result("call_0", "first"));
    turn.push(result("call_0", "first, again"));
    turn.push(call("call_0"));
    turn.push(result("call_0", "second"));
    turn.push({ type: "subagent", subagentId: "sub-1", event: result("call_0", "the subagent's own call_0") });
    turn.finish("end_turn");
    const events = (await turn.result).events;
    expect(
      events.map((event) =>
        event.type === "tool-result" ? event.text : event.type === "subagent" ? `subagent:${event.event.type}` : event.type,
      ),
    ).toEqual(["tool-call", "first", "tool-call", "second", "subagent:tool-result", "stop"]);
  });
});
