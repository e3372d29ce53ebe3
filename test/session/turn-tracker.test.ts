import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "../../src/internal/timers.js";
import { Turn } from "../../src/session/turn.js";
import { TURN_SETTLE_MS, TurnTracker } from "../../src/session/turn-tracker.js";
import type { StreamDeltaFrame, TurnFinishedFrame, UpdateLoopStatusFrame } from "../../src/wire/index.js";

const runtime = { agent_id: "agent-1", conversation_id: "conv-1" };

function loop(status: string, activeRunIds: string[], byRun: Record<string, string[]>): UpdateLoopStatusFrame {
  return {
    type: "update_loop_status",
    runtime,
    loop_status: { status, active_run_ids: activeRunIds, executing_tool_call_ids: [], client_message_ids_by_run_id: byRun },
  } as UpdateLoopStatusFrame;
}

function finished(runId: string, stopReason = "end_turn"): TurnFinishedFrame {
  return { type: "turn_finished", turn_id: `turn-${runId}`, run_id: runId, stop_reason: stopReason, runtime } as TurnFinishedFrame;
}

function say(text: string): StreamDeltaFrame {
  return {
    type: "stream_delta",
    runtime,
    delta: { message_type: "assistant_message", id: "m1", content: [{ type: "text", text }] },
  } as StreamDeltaFrame;
}

describe("TurnTracker", () => {
  let probes: number;
  let pending: number;
  let activity: boolean[];
  let tracker: TurnTracker;
  beforeEach(() => {
    vi.useFakeTimers();
    probes = 0;
    pending = 0;
    activity = [];
    tracker = new TurnTracker({
      timers: systemTimers,
      runtime: () => runtime,
      isClientTool: () => false,
      pendingCalls: () => pending,
      probe: () => void probes++,
      onActiveChange: (active) => void activity.push(active),
      stallProbeMs: 5_000,
    });
  });
  afterEach(() => {
    tracker.stop();
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
  });

  it("ignores a late turn_finished of an earlier message's run and ends on its own run's", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-2");
    tracker.onLoopStatus(loop("PROCESSING_API_RESPONSE", ["run-2"], { "run-1": ["cm-1"], "run-2": ["cm-2"] }));
    tracker.onTurnFinished(finished("run-1"));
    expect(turn.done).toBe(false);
    tracker.onTurnFinished(finished("run-2"));
    expect((await turn.result).stopReason).toBe("end_turn");
  });

  it("ends a turn whose turn_finished was lost, from an idle loop status naming its message, after the settle delay", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    tracker.onDelta(say("hello"));
    tracker.onDelta({ type: "stream_delta", runtime, delta: { message_type: "stop_reason", stop_reason: "end_turn" } } as StreamDeltaFrame);
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"] }));
    vi.advanceTimersByTime(TURN_SETTLE_MS - 1);
    expect(turn.done).toBe(false);
    vi.advanceTimersByTime(1);
    const result = await turn.result;
    expect(result).toMatchObject({ stopReason: "end_turn", text: "hello" });
  });

  it("does not end on an idle status that predates its message (a stale snapshot)", () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-9");
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"] }));
    vi.advanceTimersByTime(TURN_SETTLE_MS * 2);
    expect(turn.done).toBe(false);
    turn.finish("end_turn");
  });

  it("probes a silent turn with a sync (never with its input again), but not while a client tool of it runs", () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    vi.advanceTimersByTime(4_999);
    expect(probes).toBe(0);
    vi.advanceTimersByTime(1);
    // No sign yet that the runtime has the message: still only a sync (a repeated input would start a second run).
    expect(probes).toBe(1);
    tracker.onDelta(say("x"));
    vi.advanceTimersByTime(4_999);
    expect(probes).toBe(1);
    vi.advanceTimersByTime(1);
    expect(probes).toBe(2);
    pending = 1;
    vi.advanceTimersByTime(10_000);
    expect(probes).toBe(2);
    turn.finish("end_turn");
  });

  it("tells when a turn is active: true at begin, false once it ended", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    expect(activity).toEqual([true]);
    tracker.onTurnFinished(finished("run-1"));
    await turn.result;
    expect(activity).toEqual([true, false]);
  });

  it("clears its timers when the turn ends", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"] }));
    expect(vi.getTimerCount()).toBe(2);
    tracker.onTurnFinished(finished("run-1"));
    await turn.result;
    expect(vi.getTimerCount()).toBe(0);
  });
});
