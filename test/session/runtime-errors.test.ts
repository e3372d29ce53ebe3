/**
 * One runtime failure is one `error` event with readable text. The frames below are what the real
 * Letta Code app-server (0.32.18) sent for one turn whose model handle it cannot serve
 * (`llama.cpp/no-such-model`, recorded by integration/runtime-errors-real-peer.test.ts's setup): a
 * non-terminal `loop_error` whose message is a JSON document, the `error_message`, the
 * `turn_finished` with the JSON document as `error`, and a terminal `loop_error` after the end.
 */
import { describe, expect, it } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { runtimeErrorFromDelta, runtimeErrorFromText } from "../../packages/toolrelay/src/session/runtime-error.js";
import { Turn, type TurnResult } from "../../packages/toolrelay/src/session/turn.js";
import type { TurnEvent } from "../../packages/toolrelay/src/session/turn-events.js";
import { TurnTracker } from "../../packages/toolrelay/src/session/turn-tracker.js";
import type { StreamDeltaFrame, TurnFinishedFrame, UpdateLoopStatusFrame } from "../../packages/toolrelay/src/wire/index.js";

const runtime = { agent_id: "agent-local-1", conversation_id: "local-conv-1" };
const readable = 'Unknown model "no-such-model" for provider "llama-cpp". Choose an available model with /model.';
const jsonDocument = (runId: string) =>
  JSON.stringify({ error: { error: { type: "llm_error", message: readable, detail: readable }, run_id: runId } }, null, 2);
const apiError = (runId: string) => ({
  message_type: "error_message",
  message: readable,
  error_type: "llm_error",
  run_id: runId,
  detail: readable,
});

function delta(fields: Record<string, unknown>): StreamDeltaFrame {
  return { type: "stream_delta", runtime, delta: fields } as StreamDeltaFrame;
}
function loop(status: string, active: string[], byRun: Record<string, string[]>): UpdateLoopStatusFrame {
  return {
    type: "update_loop_status",
    runtime,
    loop_status: { status, active_run_ids: active, client_message_ids_by_run_id: byRun },
  } as UpdateLoopStatusFrame;
}
const loopError = (runId: string, terminal: boolean) =>
  delta({
    message_type: "loop_error",
    run_id: runId,
    message: jsonDocument(runId),
    stop_reason: terminal ? "error" : "llm_api_error",
    is_terminal: terminal,
    api_error: apiError(runId),
  });
const errorMessage = (runId: string) =>
  delta({
    message_type: "error_message",
    message: readable,
    detail: readable,
    error_type: "llm_error",
    retryable: false,
    run_id: runId,
    type: "message",
  });
const finished = (runId: string): TurnFinishedFrame =>
  ({
    type: "turn_finished",
    turn_id: "batch-1",
    stop_reason: "error",
    run_id: runId,
    error: jsonDocument(runId),
    runtime,
  }) as TurnFinishedFrame;

/** A tracker with one running turn of message `cm-1`, and the turn. */
function running(): { tracker: TurnTracker; turn: Turn } {
  const tracker = new TurnTracker({
    timers: systemTimers,
    runtime: () => runtime,
    isClientTool: () => false,
    pendingCalls: () => 0,
    probe: () => undefined,
    stallProbeMs: 0,
  });
  const turn = Turn.create(async () => undefined);
  tracker.begin(turn, "cm-1");
  tracker.inputWritten("cm-1");
  return { tracker, turn };
}

const errorsOf = (result: TurnResult): TurnEvent[] => result.events.filter((event) => event.type === "error");

describe("a runtime failure in a turn", () => {
  it("is one error event with the readable message and the runtime's fields, and the result's error is that message (the real runtime's frames)", async () => {
    const { tracker, turn } = running();
    tracker.onLoopStatus(loop("PROCESSING_API_RESPONSE", ["local-run-1"], { "local-run-1": ["cm-1"] }));
    tracker.onDelta(loopError("local-run-1", false));
    tracker.onDelta(errorMessage("local-run-1"));
    tracker.onDelta(delta({ message_type: "stop_reason", stop_reason: "error", run_id: "local-run-1" }));
    tracker.onTurnFinished(finished("local-run-1"));
    tracker.onDelta(loopError("local-run-1", true));
    const result = await turn.result;
    expect(errorsOf(result)).toEqual([{ type: "error", message: readable, errorType: "llm_error", runId: "local-run-1" }]);
    expect(result.error).toBe(readable);
    expect(result.stopReason).toBe("error");
    tracker.stop();
  });

  it("is one error event per failed run when the runtime retries (each run fails once)", async () => {
    const { tracker, turn } = running();
    for (const run of ["local-run-1", "local-run-2"]) {
      tracker.onLoopStatus(loop("PROCESSING_API_RESPONSE", [run], { [run]: ["cm-1"] }));
      tracker.onDelta(loopError(run, false));
      tracker.onDelta(errorMessage(run));
    }
    tracker.onTurnFinished(finished("local-run-2"));
    const result = await turn.result;
    expect(errorsOf(result).map((event) => event.type === "error" && event.runId)).toEqual(["local-run-1", "local-run-2"]);
    expect(result.error).toBe(readable);
    tracker.stop();
  });

  it("reported only by turn_finished (a turn that failed before any run) is one error event too", async () => {
    const { tracker, turn } = running();
    tracker.onTurnFinished({
      type: "turn_finished",
      turn_id: "batch-1",
      stop_reason: "error",
      error: jsonDocument("r-9"),
      runtime,
    } as TurnFinishedFrame);
    const result = await turn.result;
    expect(errorsOf(result)).toEqual([{ type: "error", message: readable, errorType: "llm_error", runId: "r-9" }]);
    expect(result.error).toBe(readable);
    tracker.stop();
  });

  it("two different failures of one run stay two events", async () => {
    const { tracker, turn } = running();
    tracker.onLoopStatus(loop("PROCESSING_API_RESPONSE", ["run-1"], { "run-1": ["cm-1"] }));
    tracker.onDelta(delta({ message_type: "error_message", message: "first", run_id: "run-1" }));
    tracker.onDelta(delta({ message_type: "error_message", message: "second", run_id: "run-1" }));
    tracker.onTurnFinished({
      type: "turn_finished",
      turn_id: "batch-1",
      stop_reason: "error",
      run_id: "run-1",
      error: "second",
      runtime,
    } as TurnFinishedFrame);
    const result = await turn.result;
    expect(errorsOf(result).map((event) => event.type === "error" && event.message)).toEqual(["first", "second"]);
    expect(result.error).toBe("second");
    tracker.stop();
  });
});

describe("runtimeErrorFromText / runtimeErrorFromDelta", () => {
  it("takes a JSON document of an error apart, at any nesting, and keeps the run it names", () => {
    expect(runtimeErrorFromText(jsonDocument("run-3"))).toEqual({ message: readable, errorType: "llm_error", runId: "run-3" });
    expect(runtimeErrorFromText('{"error":"rate limited"}', "run-4")).toEqual({ message: "rate limited", runId: "run-4" });
    expect(runtimeErrorFromText('{"error":{"message":"boom","detail":"stack"}}')).toEqual({ message: "boom", detail: "stack" });
  });

  it("keeps any other text as it is, JSON that is no error included", () => {
    expect(runtimeErrorFromText('500: {"message":"model exploded"}')).toEqual({ message: '500: {"message":"model exploded"}' });
    expect(runtimeErrorFromText('{"not":"an error"}')).toEqual({ message: '{"not":"an error"}' });
    expect(runtimeErrorFromText("{broken")).toEqual({ message: "{broken" });
    expect(runtimeErrorFromText("  ")).toEqual({ message: "runtime error" });
  });

  it("prefers a loop_error's structured api_error, and reads a loop_error without one from its message", () => {
    expect(runtimeErrorFromDelta(loopError("run-1", false).delta as Record<string, unknown>, "x")).toEqual({
      message: readable,
      errorType: "llm_error",
      runId: "run-1",
    });
    expect(
      runtimeErrorFromDelta({ message_type: "loop_error", message: "Protocol violation: input.payload must be an object" }, "x"),
    ).toEqual({
      message: "Protocol violation: input.payload must be an object",
    });
    expect(
      runtimeErrorFromDelta(
        {
          message_type: "error_message",
          message: "The model endpoint returned 500",
          error_type: "llm_error",
          run_id: "run-1",
          detail: "upstream timeout",
        },
        "x",
      ),
    ).toEqual({
      message: "The model endpoint returned 500",
      errorType: "llm_error",
      detail: "upstream timeout",
      runId: "run-1",
    });
    expect(runtimeErrorFromDelta({ message_type: "error_message" }, "fallback")).toEqual({ message: "fallback" });
  });
});
