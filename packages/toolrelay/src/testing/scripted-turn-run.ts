/**
 * One scripted turn from its start to its end: the `user_message` of an input that waited in the
 * queue, the turn session the script drives, and how the end is announced — `cancelled` (aborted),
 * `error` (the script threw, or failed on purpose with `turn.fail()`), or `end_turn` — before the
 * conversation is idle again. Everything goes through the turn's {@link TurnHost}.
 */
import { randomUUID } from "node:crypto";
import type { ActiveTurn, InputItem, ScriptedConversation } from "./scripted-conversation.js";
import { lifecycleDelta, streamDelta, turnFinishedFrame } from "./scripted-frames.js";
import type { ScriptedVisibleTool, TurnScript } from "./scripted-runtime-types.js";
import type { TurnHost } from "./scripted-turn-host.js";
import { ScriptedTurnSession } from "./scripted-turn.js";
import { ScriptedTurnFailure } from "./scripted-turn-start.js";

/** What one turn runs with. */
export interface ScriptedTurnRun {
  conversation: ScriptedConversation;
  /** The turn reserved on the conversation (its abort controller and driving connection). */
  active: ActiveTurn;
  input: InputItem;
  turnId: string;
  /** Set when the input waited in the queue: its `user_message` is emitted first. */
  dequeued: { clientMessageId: string; content: unknown } | undefined;
  /** The client tools the turn sees. */
  tools: readonly ScriptedVisibleTool[];
  script: TurnScript;
  /** The script threw (an assertion, a bug) — not `turn.fail()`. */
  onScriptError(error: unknown): void;
  /** The turn is over and its frames are flushed: the next queued input may start. */
  onIdle(): void;
}

/**
 * Starts the turn: its first frames are emitted and the script is called before this returns.
 * Resolves once the turn has ended and {@link ScriptedTurnRun.onIdle} was called.
 */
export function startScriptedTurn(host: TurnHost, run: ScriptedTurnRun): Promise<void> {
  const { conversation, active, input, dequeued } = run;
  if (dequeued) {
    host.emit(
      streamDelta({
        type: "message",
        id: `user-msg-${randomUUID()}`,
        date: new Date(host.now()).toISOString(),
        message_type: "user_message",
        content: dequeued.content,
        otid: dequeued.clientMessageId,
      }),
    );
  }
  const session = new ScriptedTurnSession(host, {
    scope: conversation.scope,
    connectionId: input.connectionId,
    turnId: run.turnId,
    messages: input.messages,
    payload: input.payload,
    clientMessageIds: input.clientMessageIds,
    tools: run.tools,
    signal: active.controller.signal,
  });
  active.session = session;
  session.ensureStep();
  host.emitDeviceStatus();
  return runScript(host, run, session);
}

async function runScript(host: TurnHost, run: ScriptedTurnRun, session: ScriptedTurnSession): Promise<void> {
  let failure: unknown;
  let failed = false;
  try {
    await run.script(session);
  } catch (error) {
    failed = true;
    failure = error;
    // A thrown assertion must fail the test, not only end the turn: close() rejects with it.
    if (!(error instanceof ScriptedTurnFailure)) run.onScriptError(error);
  }
  if (run.active.controller.signal.aborted) {
    host.emit(turnFinishedFrame(session.turnId, "cancelled", session.lastRunId));
  } else if (failed) {
    const message = failure instanceof Error ? failure.message : String(failure);
    session.ensureStep();
    session.emitErrorMessage(message);
    session.endStep("error", { withUsage: false });
    host.setLoop("WAITING_ON_INPUT", []);
    host.emitDeviceStatus();
    host.emit(turnFinishedFrame(session.turnId, "error", session.lastRunId, message));
    host.emit(
      streamDelta(
        lifecycleDelta("loop_error", session.lastRunId, {
          message,
          stop_reason: "error",
          is_terminal: true,
          api_error: { message_type: "error_message", message, error_type: "internal_error", run_id: session.lastRunId, detail: message },
        }),
      ),
    );
  } else {
    session.ensureStep();
    session.endStep("end_turn");
    host.setLoop("WAITING_ON_INPUT", []);
    host.emitDeviceStatus();
    host.emit(turnFinishedFrame(session.turnId, "end_turn", session.lastRunId));
  }
  run.conversation.active = undefined;
  run.conversation.reportsStaleStatus = false;
  run.conversation.lastTurnFinishedAt = host.now();
  host.emitDeviceStatus();
  await host.flush();
  run.onIdle();
}
