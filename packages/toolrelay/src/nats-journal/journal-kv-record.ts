/**
 * What the NATS KV journal stores, and how it reads it back without trusting it. Two kinds of
 * value, JSON, version 1:
 *
 * - under `c.<sha256 hex of the idempotency key>`, the call: `{ v: 1, kind: "call", claim, ...JournalEntry }`
 *   (`claim` is a random id per `start`, so a `start` that timed out and retried knows its own record);
 * - under `a.<sha256 hex of the alias key>`, an alias: `{ v: 1, kind: "alias", key, target }`.
 *
 * KV keys allow only `[-/_=.a-zA-Z0-9]`, hence the hashes. A value that is not one of these (bad
 * JSON, another shape, another key than the one asked for) decodes as `invalid`: the journal then
 * answers "expired" (outcome unknown: the call is neither run again nor given a made-up response).
 */
import { createHash } from "node:crypto";
import { z } from "zod/v4";
import type { JournalEntry } from "../calls/call-journal.js";
import { parseJson } from "../internal/safe-json.js";
import { type ToolCallResponseBody, toolCallResponseBodySchema } from "../wire/index.js";

/** A call's record as stored (a {@link JournalEntry} in state `started` or `settled`, plus its claim). */
export interface StoredCall extends JournalEntry {
  readonly v: 1;
  readonly kind: "call";
  readonly state: "started" | "settled";
  /** A random id of the `start` that wrote the record. */
  readonly claim: string;
}

/** A stored value, read back. */
export type DecodedValue = { kind: "call"; record: StoredCall } | { kind: "alias"; target: string } | { kind: "invalid"; reason: string };

/** The KV key of the record of `key`. */
export function recordKvKey(key: string): string {
  return `c.${sha256Hex(key)}`;
}

/** The KV key of the alias `alias`. */
export function aliasKvKey(alias: string): string {
  return `a.${sha256Hex(alias)}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The bytes of a record; `undefined` when it cannot be JSON (an input with a cycle or a BigInt). */
export function encodeStoredCall(record: StoredCall): Uint8Array | undefined {
  try {
    return encoder.encode(JSON.stringify(record));
  } catch {
    return undefined;
  }
}

/** The bytes of an alias of `alias` to the call `target`. */
export function encodeAlias(alias: string, target: string): Uint8Array {
  return encoder.encode(JSON.stringify({ v: 1, kind: "alias", key: alias, target }));
}

/** The started record of `entry` (its input only when `input` is given). */
export function startedRecord(entry: JournalEntry, claim: string, input?: { value: unknown }): StoredCall {
  return {
    v: 1,
    kind: "call",
    claim,
    key: entry.key,
    state: "started",
    toolName: entry.toolName,
    agentId: entry.agentId,
    conversationId: entry.conversationId,
    toolCallId: entry.toolCallId,
    inputSha256: entry.inputSha256,
    ...(input === undefined ? {} : { input: input.value }),
    startedAt: entry.startedAt,
  };
}

/** `record` settled with `response` at `settledAt`. */
export function settledRecord(record: StoredCall, response: ToolCallResponseBody, settledAt: number): StoredCall {
  return { ...record, state: "settled", settledAt, response };
}

/** The entry a caller sees (without the version, kind and claim). */
export function entryOf(record: StoredCall): JournalEntry {
  const { v: _version, kind: _kind, claim: _claim, ...entry } = record;
  return entry;
}

/** What the journal answers for a call whose record is unreadable, or gone behind an alias: outcome unknown. */
export function expiredEntry(key: string): JournalEntry {
  return { key, state: "expired", toolName: "", agentId: "", conversationId: "", toolCallId: "", inputSha256: "", startedAt: 0 };
}

const text = z.string();
const epochMs = z.number().finite().nonnegative();
const storedCallSchema = z.strictObject({
  v: z.literal(1),
  kind: z.literal("call"),
  claim: text,
  key: text,
  state: z.enum(["started", "settled"]),
  toolName: text,
  agentId: text,
  conversationId: text,
  toolCallId: text,
  inputSha256: text,
  input: z.unknown().optional(),
  startedAt: epochMs,
  settledAt: epochMs.optional(),
  response: toolCallResponseBodySchema.optional(),
});
const aliasSchema = z.strictObject({ v: z.literal(1), kind: z.literal("alias"), key: text, target: text });

/** Read the value stored for `key` (an idempotency key, or an alias key): never throws. */
export function decodeValue(bytes: Uint8Array, key: string): DecodedValue {
  let json: string;
  try {
    json = decoder.decode(bytes);
  } catch {
    return { kind: "invalid", reason: "not UTF-8" };
  }
  const parsed = parseJson(json);
  if (!parsed.ok) return { kind: "invalid", reason: parsed.error };
  const call = storedCallSchema.safeParse(parsed.value);
  if (call.success) {
    const record = parsed.value as StoredCall;
    if (record.key !== key) return { kind: "invalid", reason: "the record names another key" };
    const complete =
      record.state === "started" ? record.response === undefined : record.response !== undefined && record.settledAt !== undefined;
    if (!complete)
      return { kind: "invalid", reason: `a ${record.state} record ${record.state === "started" ? "with" : "without"} a response` };
    // The value as it was stored (zod's copy would be equal; this keeps the response byte for byte).
    return { kind: "call", record };
  }
  const alias = aliasSchema.safeParse(parsed.value);
  if (alias.success) {
    if (alias.data.key !== key) return { kind: "invalid", reason: "the alias names another key" };
    return { kind: "alias", target: alias.data.target };
  }
  return { kind: "invalid", reason: "not a journal record" };
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
