/**
 * Execution identity. A tool callback runs at most once per {@link CallKey}.
 * `callSlotId` is the one function that turns ids into a string (nothing else
 * concatenates ids); the input digest tells apart two calls that share a slot
 * because the provider reused its `tool_call_id` (`call_0` in every turn).
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
  /** {@link inputDigest} of the call's input. */
  readonly inputDigest: string;
}

/**
 * The string form of a key without its digest — the slot all inputs sent
 * under one tool call id share: a JSON array of the four ids in fixed order,
 * unambiguous for any characters inside an id. `scopeId` (the store's short
 * number for the first three ids) stands in for them when given.
 */
export function callSlotId(key: CallKey, scopeId?: number): string {
  if (scopeId !== undefined) return `${scopeId}:${key.toolCallId}`;
  return JSON.stringify([key.connectionId, key.agentId, key.conversationId, key.toolCallId]);
}

/** Canonical texts up to this length are their own digest (no hashing for small inputs). */
const LITERAL_DIGEST_CHARS = 64;

/**
 * The digest of a canonical input text (see {@link canonicalJson}): the text
 * itself when short, else its SHA-256 in base64url prefixed with `#`.
 */
export function inputDigest(canonicalText: string): string {
  if (canonicalText.length <= LITERAL_DIGEST_CHARS) return canonicalText;
  return `#${createHash("sha256").update(canonicalText).digest("base64url")}`;
}

/**
 * JSON with object keys sorted at every level, so that equal inputs have one
 * text whatever their key order. Its UTF-8 length is the input's size. Built
 * in one join, so the text is flat (no rope of pieces kept alive by a digest).
 * Inputs come from a decoded frame (depth-capped, no cycles).
 */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  writeCanonical(value, parts);
  return parts.join("");
}

function writeCanonical(value: unknown, parts: string[]): void {
  if (typeof value !== "object" || value === null) {
    parts.push(JSON.stringify(value) ?? "null");
    return;
  }
  const array = Array.isArray(value);
  parts.push(array ? "[" : "{");
  const record = value as Record<string, unknown>;
  const keys = array ? undefined : Object.keys(record).sort();
  const count = array ? (value as unknown[]).length : keys!.length;
  for (let index = 0; index < count; index++) {
    if (index > 0) parts.push(",");
    if (array) writeCanonical((value as unknown[])[index], parts);
    else {
      parts.push(JSON.stringify(keys![index]), ":");
      writeCanonical(record[keys![index]!], parts);
    }
  }
  parts.push(array ? "]" : "}");
}
