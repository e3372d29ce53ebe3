/**
 * What a scripted turn starts from: how it began (`TurnStart`), the user's
 * text, the decisions of its approval step, and the two ways a turn ends
 * early (interrupted, or failed on purpose with `turn.fail()`).
 */
import type { ScriptedRuntimeScope, ScriptedVisibleTool } from "./scripted-runtime-types.js";

export const INTERRUPTED_BY_USER = "Interrupted by user";

/** Thrown by `turn.fail()`: an error turn the script asked for, not a script error. */
export class ScriptedTurnFailure extends Error {
  override name = "ScriptedTurnFailure";
}

/** How a turn began: everything its script can read. */
export interface TurnStart {
  scope: ScriptedRuntimeScope;
  connectionId: string;
  turnId: string;
  messages: readonly unknown[];
  payload: Readonly<Record<string, unknown>>;
  clientMessageIds: readonly string[];
  tools: readonly ScriptedVisibleTool[];
  signal: AbortSignal;
}

/** One proposed tool call and what the approval step decided for it. */
export interface Decision {
  spec: { toolCallId: string; name: string; input: Record<string, unknown> };
  messageId: string;
  approved: boolean;
  denial?: string | undefined;
}

/** The decisions of one approval step, and the run it ended. */
export interface Proposal {
  decisions: Decision[];
  runId: string;
}

/** Text of the last user message: string content, or its text parts joined with "\n". */
export function lastUserText(messages: readonly unknown[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as Record<string, unknown> | null;
    if (!message || typeof message !== "object" || message.role !== "user") continue;
    if (typeof message.content === "string") return message.content;
    if (Array.isArray(message.content)) {
      return message.content
        .map((part) => (part && typeof part === "object" && typeof part.text === "string" ? (part.text as string) : ""))
        .filter((text) => text.length > 0)
        .join("\n");
    }
  }
  return "";
}
