/**
 * What one request does to a thread, decided before the response starts. When the request's
 * tool results answer calls the running turn waits for, they are delivered here (a returned call
 * they leave out is answered {@link NO_RESULT_TEXT}) and the response continues that turn;
 * otherwise a running turn is stopped first and every result the request brings is late: the
 * new turn's input tells the agent about it. A result for a call the runtime answered itself
 * (it never asked the client) is dropped. See docs/openai-bridge.md.
 */
import type { MessageInput } from "../session/session.js";
import { ChatApiError } from "./chat-api-error.js";
import type { ClientCalls } from "./client-calls.js";
import { nameInHistory, type RequestTail } from "./request-tail.js";
import type { ResolvedBridgeOptions } from "./resolve-bridge-options.js";
import type { TranscriptFingerprints } from "./transcript-fingerprint.js";
import { buildTurnInput } from "./turn-input.js";

/** What the runtime is told for a returned call the client's next request gave no result for. */
export const NO_RESULT_TEXT = "Error: the chat client returned no result for this tool call.";

/** What one request does to the thread, decided before the response starts. */
export interface RequestPlan {
  /** Results went to the waiting turn: stream its continuation. */
  continuing: boolean;
  /** The running turn must be stopped first (the client moved on without the results). */
  stopFirst: boolean;
  /** A new turn's input (after the continuation, when both). */
  input: MessageInput | undefined;
  system: string | undefined;
  fingerprints: TranscriptFingerprints;
}

/** Where the thread stands when the request arrives (its tools already updated for it). */
export interface RequestPlanContext {
  /** A turn is running: waiting for the client's tool results, or not. */
  turnRunning: boolean;
  /** The calls returned to the client; the request's results are delivered to them. */
  calls: ClientCalls;
  /** The names of the tools the client declared. */
  toolNames: readonly string[];
  /** The system text the running (or last) turn was started with. */
  systemForwarded: string | undefined;
  bridge: ResolvedBridgeOptions;
}

/** Decides the request's plan, delivering the results it brings for the waiting turn. Throws a 400 when there is nothing to answer. */
export function planRequest(context: RequestPlanContext, fingerprints: TranscriptFingerprints, tail: RequestTail): RequestPlan {
  const { calls, bridge, toolNames } = context;
  let continuing = false;
  let stopFirst = false;
  const late: RequestTail["toolResults"] = [];
  const outstanding = new Set(calls.outstanding);
  if (context.turnRunning && tail.toolResults.some((result) => outstanding.has(result.toolCallId))) {
    continuing = true;
    for (const result of tail.toolResults) {
      const delivered = calls.deliver(result.toolCallId, result.text);
      if (delivered === "late" || delivered === "unknown") late.push(result);
    }
    for (const id of calls.outstanding) calls.deliver(id, NO_RESULT_TEXT);
  } else {
    stopFirst = context.turnRunning;
    late.push(...tail.toolResults.filter((result) => !calls.endedByRuntime(result.toolCallId)));
  }
  const changedSystem = tail.system !== context.systemForwarded ? tail.system : undefined;
  const input = buildTurnInput(tail, {
    changedSystem,
    lateResults: late.map((result) => ({
      ...result,
      name: calls.nameOf(result.toolCallId) ?? result.name ?? nameInHistory(fingerprints.messages, result.toolCallId),
    })),
    nudge: toolNames.length > 0 ? bridge.toolNudge?.(toolNames) : undefined,
    maxHistoryChars: bridge.maxHistoryChars,
  });
  if (!continuing && input === undefined) {
    throw ChatApiError.invalid(
      "nothing_to_answer",
      "the request brings no new user message or tool result for this thread (its last message is the assistant's)",
      "messages",
    );
  }
  return { continuing, stopFirst, input, system: tail.system, fingerprints };
}
