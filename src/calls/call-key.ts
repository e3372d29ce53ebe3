/**
 * Execution identity. A tool callback runs at most once per {@link CallKey};
 * {@link callKeyId} is the one function in the codebase that turns ids into a
 * single string — nothing else concatenates ids.
 */
import { __plantedBugs } from "./planted-bugs.js";

/** Who asked for which tool call. Two calls with equal keys are the same call. */
export interface CallKey {
  /** The logical backend connection (stable across socket reconnects). */
  readonly connectionId: string;
  readonly agentId: string;
  readonly conversationId: string;
  /** The model's id for the tool call (stable across the runtime's retries). */
  readonly toolCallId: string;
}

/**
 * The string form of a key, for maps and logs: a JSON array of the four ids in
 * fixed order. JSON escaping makes it unambiguous for any characters (a `/`,
 * `:` or `"` inside an id cannot make two different keys equal).
 */
export function callKeyId(key: CallKey): string {
  // Planted bug (reliability suite): drop the scope from the key.
  if (__plantedBugs.keyByToolCallIdOnly) return JSON.stringify([key.toolCallId]);
  return JSON.stringify([key.connectionId, key.agentId, key.conversationId, key.toolCallId]);
}

/** True when both keys name the same call. */
export function sameCallKey(left: CallKey, right: CallKey): boolean {
  return callKeyId(left) === callKeyId(right);
}
