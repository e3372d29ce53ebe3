import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { Turn } from "../../packages/toolrelay/src/session/turn.js";
import { LOST_END_QUIET_MS, TurnTracker } from "../../packages/toolrelay/src/session/turn-tracker.js";
import type { StreamDeltaFrame, TurnFinishedFrame, UpdateLoopStatusFrame } from "../../packages/toolrelay/src/wire/index.js";

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

  it("never ends on an idle loop status alone: the real runtime reports WAITING_ON_INPUT for a whole turn that follows the previous one closely", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-2");
    tracker.inputWritten("cm-2");
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"], "run-3": ["cm-2"] }));
    tracker.onDelta(say("Working on it."));
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"], "run-3": ["cm-2"] }));
    vi.advanceTimersByTime(LOST_END_QUIET_MS * 2);
    expect(turn.done).toBe(false);
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-3": ["cm-2"], "run-4": ["cm-2"] }));
    tracker.onDelta(say(" done"));
    tracker.onTurnFinished(finished("run-4"));
    expect(await turn.result).toMatchObject({ stopReason: "end_turn", text: "Working on it. done" });
  });

  it("gives a late turn_finished without run_id to the aborted message that owes it, not to the next turn", async () => {
    const first = Turn.create(async () => undefined);
    tracker.begin(first, "cm-1");
    tracker.inputWritten("cm-1");
    tracker.markAborted();
    first.finish("cancelled"); // the SDK's own settle after the abort
    const second = Turn.create(async () => undefined);
    tracker.begin(second, "cm-2");
    tracker.inputWritten("cm-2");
    expect(tracker.owedEnds).toEqual(["cm-1", "cm-2"]);
    tracker.onTurnFinished({ type: "turn_finished", turn_id: "batch-a", stop_reason: "cancelled", runtime } as TurnFinishedFrame);
    expect(second.done).toBe(false);
    expect(tracker.owedEnds).toEqual(["cm-2"]);
    tracker.onLoopStatus(loop("PROCESSING_API_RESPONSE", ["run-2"], { "run-2": ["cm-2"] }));
    tracker.onDelta(say("answer"));
    tracker.onTurnFinished(finished("run-2"));
    expect(await second.result).toMatchObject({ stopReason: "end_turn", text: "answer" });
    expect(tracker.owedEnds).toEqual([]);
  });

  it("ends its own turn on a turn_finished without run_id when it is the oldest owed (a turn that failed before any run)", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    tracker.inputWritten("cm-1");
    tracker.onTurnFinished({
      type: "turn_finished",
      turn_id: "batch-a",
      stop_reason: "error",
      error: "llm_error",
      runtime,
    } as TurnFinishedFrame);
    expect(await turn.result).toMatchObject({ stopReason: "error", error: "llm_error" });
  });

  it("a run of a later message retires every message owed before it (the runtime is serial)", () => {
    tracker.inputWritten("cm-1");
    tracker.inputWritten("cm-2");
    tracker.inputWritten("cm-3");
    tracker.onLoopStatus(loop("PROCESSING_API_RESPONSE", ["run-5"], { "run-5": ["cm-3"] }));
    expect(tracker.owedEnds).toEqual(["cm-3"]);
    tracker.inputDropped("cm-3");
    expect(tracker.owedEnds).toEqual([]);
  });

  it("holds a turn_finished whose run is not mapped yet until a loop status maps it (the relay's two sockets reorder)", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    tracker.inputWritten("cm-1");
    tracker.onTurnFinished(finished("run-7"), 20);
    expect(turn.done).toBe(false);
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-7": ["cm-1"] }), 19);
    expect((await turn.result).stopReason).toBe("end_turn");
  });

  it("drops a turn_finished of the runtime's own turn once a later loop status does not map its run", () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    tracker.inputWritten("cm-1");
    tracker.onTurnFinished(finished("run-own"), 20);
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], {}), 19); // older than the end: undecided
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], {}), 21);
    tracker.onLoopStatus(loop("PROCESSING_API_RESPONSE", ["run-8"], { "run-own": ["cm-1"], "run-8": ["cm-1"] }), 22);
    expect(turn.done).toBe(false);
    turn.finish("end_turn");
  });

  it("after frames may have been lost, ends an idle, quiet turn with nothing running after LOST_END_QUIET_MS — not while a client call runs, not after requires_approval, and any frame of it re-arms the wait", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    tracker.inputWritten("cm-1");
    tracker.onLoopStatus(loop("PROCESSING_API_RESPONSE", ["run-1"], { "run-1": ["cm-1"] }));
    tracker.onDelta(say("partial"));
    tracker.framesMayBeLost();
    tracker.onDelta({
      type: "stream_delta",
      runtime,
      delta: { message_type: "stop_reason", stop_reason: "requires_approval", run_id: "run-1" },
    } as StreamDeltaFrame);
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"] }));
    vi.advanceTimersByTime(LOST_END_QUIET_MS);
    expect(turn.done).toBe(false); // an approval is awaited
    tracker.onDelta({
      type: "stream_delta",
      runtime,
      delta: { message_type: "stop_reason", stop_reason: "end_turn", run_id: "run-1" },
    } as StreamDeltaFrame);
    pending = 1;
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"] }));
    vi.advanceTimersByTime(LOST_END_QUIET_MS);
    expect(turn.done).toBe(false); // a client call still runs
    pending = 0;
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"] }));
    vi.advanceTimersByTime(LOST_END_QUIET_MS - 1);
    tracker.onActivity(runtime); // a tool request of this runtime: not quiet
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"] }));
    vi.advanceTimersByTime(LOST_END_QUIET_MS - 1);
    expect(turn.done).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await turn.result).toMatchObject({ stopReason: "end_turn", text: "partial" });
    // Still owed: its end, if it comes after all, must not end the next turn.
    expect(tracker.owedEnds).toEqual(["cm-1"]);
  });

  it("after frames may have been lost, never ends a turn the runtime has shown no sign of having: an idle runtime may simply never have got its input (found with a frozen relay node, issue 27)", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    tracker.inputWritten("cm-1");
    tracker.framesMayBeLost();
    // Idle, no run, nothing mapped to cm-1: the runtime says nothing about this message.
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], {}));
    vi.advanceTimersByTime(LOST_END_QUIET_MS * 3);
    expect(turn.done).toBe(false); // its input's deadline decides (INPUT_UNCONFIRMED), not an empty end_turn
    // input_accepted: now the runtime has it, and the lost-end fallback applies.
    tracker.inputAccepted();
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], {}));
    vi.advanceTimersByTime(LOST_END_QUIET_MS);
    expect(await turn.result).toMatchObject({ stopReason: "end_turn" });
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
    tracker.onLoopStatus(loop("PROCESSING_API_RESPONSE", ["run-1"], { "run-1": ["cm-1"] }));
    tracker.onTurnFinished(finished("run-1"));
    await turn.result;
    expect(activity).toEqual([true, false]);
  });

  it("clears its timers when the turn ends", async () => {
    const turn = Turn.create(async () => undefined);
    tracker.begin(turn, "cm-1");
    tracker.framesMayBeLost();
    tracker.onLoopStatus(loop("WAITING_ON_INPUT", [], { "run-1": ["cm-1"] }));
    expect(vi.getTimerCount()).toBe(2);
    tracker.onTurnFinished(finished("run-1"));
    await turn.result;
    expect(vi.getTimerCount()).toBe(0);
  });
});
