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

/**
 * The idempotency key of a call (`ToolCallContext.idempotencyKey`): `tr1_` + the SHA-256, in
 * base64url, of the agent, conversation, tool call id and the request id the call first arrived
 * with. Re-deliveries of the call (a relay's re-offer keeps the request id; a runtime's re-attempt
 * joins the call) keep it; a new model request gets a new request id from the runtime
 * (`external-tool-<uuid>`), so a reused `call_0` gets a new key. Computed, so a process that meets
 * the same first request again (a journal, a restart) derives the same key.
 */
export function idempotencyKeyOf(agentId: string, conversationId: string, toolCallId: string, firstRequestId: string): string {
  const digest = createHash("sha256")
    .update(JSON.stringify([agentId, conversationId, toolCallId, firstRequestId]))
    .digest("base64url");
  return `tr1_${digest}`;
}
