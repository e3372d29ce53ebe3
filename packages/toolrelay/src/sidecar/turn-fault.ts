/**
 * The fault table: every way a turn can end, as one name the host can act on.
 * `turn_end.fault` is computed here and nowhere else, from how the SDK's turn
 * ended and the outcomes of the turn's client tool calls. Table and precedence
 * in docs/sidecar.md ("Faults").
 */
import { z } from "zod/v4";
import type { CallOutcome } from "../calls/index.js";
import { isToolrelayError } from "../errors.js";
import type { TurnResult } from "../session/turn.js";

/** Every fault, in precedence order (an earlier one wins when several apply). */
export const TURN_FAULTS = [
  "turn_in_progress",
  "session_closed",
  "link_lost",
  "input_unconfirmed",
  "input_refused",
  "internal",
  "cancelled",
  "runtime_error",
  "tool_timeout",
  "tool_error",
  "incomplete",
  "ok",
] as const;

/** How a turn ended: one name of the fault table (`turn_end.fault`). */
export type TurnFault = (typeof TURN_FAULTS)[number];
export const turnFaultSchema = z.enum(TURN_FAULTS);

/** A client tool call's outcome as the protocol names it (the SDK's outcome kinds, snake_case). */
export const TOOL_OUTCOMES = [
  "ok",
  "tool_error",
  "invalid_input",
  "unknown_tool",
  "input_too_large",
  "timeout",
  "cancelled",
  "disconnected",
  "busy",
  "denied",
  "recorded",
  "outcome_unknown",
  "journal_failed",
] as const;
/** How one client tool call ended (`turn_end.tool_calls[].outcome`). */
export type ToolOutcome = (typeof TOOL_OUTCOMES)[number];
export const toolOutcomeSchema = z.enum(TOOL_OUTCOMES);

/** The protocol's name of every outcome kind (a kind without one does not compile). */
const TOOL_OUTCOME_OF: Readonly<Record<CallOutcome["kind"], ToolOutcome>> = {
  ok: "ok",
  "tool-error": "tool_error",
  "invalid-input": "invalid_input",
  "unknown-tool": "unknown_tool",
  "input-too-large": "input_too_large",
  timeout: "timeout",
  cancelled: "cancelled",
  disconnected: "disconnected",
  busy: "busy",
  denied: "denied",
  recorded: "recorded",
  "outcome-unknown": "outcome_unknown",
  "journal-failed": "journal_failed",
};

export function toolOutcomeOf(kind: CallOutcome["kind"]): ToolOutcome {
  return TOOL_OUTCOME_OF[kind];
}

/** How the SDK's turn ended. */
export type TurnEnding =
  /** The runtime ended it (`aborted`: the host asked for the abort). */
  | { kind: "finished"; result: TurnResult; aborted: boolean }
  /** The SDK could not run it to its end (`turn.result` rejected, or `send` threw). */
  | { kind: "failed"; error: unknown };

export interface FaultVerdict {
  fault: TurnFault;
  /** Why, in words, for every fault but `ok` (no prompt, argument or result in it). */
  message?: string | undefined;
}

/** One client tool call of the turn, as it ended. */
export interface TurnToolCall {
  tool: string;
  outcome: ToolOutcome;
}

const RUNTIME_ERROR_STOP = /error|invalid|overflow/i;

/** The one fault of a turn. */
export function turnFault(ending: TurnEnding, calls: readonly TurnToolCall[]): FaultVerdict {
  if (ending.kind === "failed") return failedFault(ending.error);
  const { result, aborted } = ending;
  const verdicts: FaultVerdict[] = [];
  if (aborted || result.stopReason === "cancelled")
    verdicts.push({ fault: "cancelled", message: aborted ? "the host aborted the turn" : "the runtime cancelled the turn" });
  if (result.error !== undefined || RUNTIME_ERROR_STOP.test(result.stopReason)) {
    verdicts.push({ fault: "runtime_error", message: result.error ?? `the runtime ended the turn with stop reason ${result.stopReason}` });
  }
  for (const call of calls) {
    if (call.outcome === "disconnected")
      verdicts.push({ fault: "link_lost", message: `the call to ${call.tool} was abandoned: the link to the runtime was lost` });
    else if (call.outcome === "timeout")
      verdicts.push({ fault: "tool_timeout", message: `${call.tool} passed its deadline; its effects are unknown` });
    // denied: the host's own answer (or its silence) kept the call from running; the model read why. Not a fault.
    else if (call.outcome !== "ok" && call.outcome !== "cancelled" && call.outcome !== "denied")
      verdicts.push({ fault: "tool_error", message: `${call.tool} ended as ${call.outcome}` });
  }
  if (result.stopReason !== "end_turn")
    verdicts.push({ fault: "incomplete", message: `the runtime stopped the turn early (stop reason ${result.stopReason})` });
  return mostSevere(verdicts) ?? { fault: "ok" };
}

function failedFault(error: unknown): FaultVerdict {
  const message = error instanceof Error ? error.message : String(error);
  if (!isToolrelayError(error)) return { fault: "internal", message };
  switch (error.code) {
    case "TURN_IN_PROGRESS":
      return { fault: "turn_in_progress", message };
    case "ABORTED":
      return { fault: "session_closed", message };
    case "CONNECTION_CLOSED":
      return { fault: "link_lost", message };
    case "INPUT_UNCONFIRMED":
      return { fault: "input_unconfirmed", message };
    case "REQUEST_FAILED":
    case "REQUEST_TIMEOUT":
    case "INVALID_FRAME":
      return { fault: "input_refused", message };
    default:
      return { fault: "internal", message };
  }
}

function mostSevere(verdicts: readonly FaultVerdict[]): FaultVerdict | undefined {
  let best: FaultVerdict | undefined;
  for (const verdict of verdicts) {
    if (best === undefined || TURN_FAULTS.indexOf(verdict.fault) < TURN_FAULTS.indexOf(best.fault)) best = verdict;
  }
  return best;
}
