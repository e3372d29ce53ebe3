/**
 * Execution identity. A tool callback runs at most once per {@link CallKey}.
 * `callScopeId` is the one function that turns ids into a string (nothing else
 * concatenates ids); within a scope, calls are found by tool call id, and the
 * input digest tells apart two calls under one tool call id because the
 * provider reused it (`call_0` in every turn).
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
  /** The SHA-256 digest of the call's canonical input (`inputDigest` in src/calls/call-key.ts). */
  readonly inputDigest: string;
}

/**
 * The scope of a key as one string — a JSON array of the connection, agent and
 * conversation ids in fixed order, unambiguous for any characters inside an id.
 */
export function callScopeId(key: CallKey): string {
  return JSON.stringify([key.connectionId, key.agentId, key.conversationId]);
}

/** Canonical texts up to this length are their own digest (no hashing for small inputs). */
const LITERAL_DIGEST_CHARS = 64;
/** The most common input: one shared string rather than one per call. */
const EMPTY_OBJECT = "{}";

/**
 * The digest of a canonical input text (see {@link canonicalJson}): the text
 * itself when short, else its SHA-256 in base64url prefixed with `#`.
 */
export function inputDigest(canonicalText: string): string {
  if (canonicalText === "{}") return EMPTY_OBJECT;
  if (canonicalText.length <= LITERAL_DIGEST_CHARS) return canonicalText;
  return `#${createHash("sha256").update(canonicalText).digest("base64url")}`;
}

/**
 * JSON with object keys sorted at every level, so that equal inputs have one
 * text whatever their key order; its UTF-8 length is the input's size. Joined,
 * not concatenated, so the text is flat (no rope of pieces kept alive by a
 * digest). Inputs come from a decoded frame (depth-capped, no cycles).
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return ["[", value.map(canonicalJson).join(","), "]"].join("");
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return ["{", members.join(","), "}"].join("");
}
