/**
 * Execution identity. A tool callback runs at most once per {@link CallKey}. Calls are found by
 * tool call id and told apart by `sameCall` (the one comparison of keys): by scope, and by the
 * input's digest, because providers reuse tool call ids (`call_0` in every turn).
 */
import { createHash } from "node:crypto";

/** Who asked for which tool call, with which input. Equal keys are the same call. */
export interface CallKey {
  /** The logical backend connection (stable across socket reconnects). */
  readonly connectionId: string;
  readonly agentId: string;
  readonly conversationId: string;
  /** The model's id for the tool call. Not an identity on its own: providers reuse ids across turns. */
  readonly toolCallId: string;
  /** The digest of the call's canonical input: the canonical JSON itself up to 64 characters, else `#` + its SHA-256. */
  readonly inputDigest: string;
}

/** Whether two keys name the same call: the same scope, tool call id and input digest. */
export function sameCall(left: CallKey, right: CallKey): boolean {
  return left.inputDigest === right.inputDigest && left.toolCallId === right.toolCallId && sameScope(left, right);
}

/** Whether two keys come from the same connection, agent and conversation. */
export function sameScope(left: CallKey, right: CallKey): boolean {
  return left.conversationId === right.conversationId && left.agentId === right.agentId && left.connectionId === right.connectionId;
}

/** The digest of a canonical input text (`canonicalJson`, internal/canonical-json.ts): the text itself up to 64 characters, else `#` + its SHA-256 in base64url. */
export function inputDigest(canonicalText: string): string {
  if (canonicalText.length <= 64) return canonicalText === "{}" ? "{}" : canonicalText;
  return `#${createHash("sha256").update(canonicalText).digest("base64url")}`;
}
