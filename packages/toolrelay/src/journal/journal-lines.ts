/**
 * The lines of a journal file: `<crc32 of the JSON's UTF-8, 8 lowercase hex digits> <json>\n`.
 * The first line is a header naming the format and its version; then `start`, `settle`, `alias`
 * and (written only by a compaction) `tombstone` lines, each with `at`, the journal clock's time
 * of the write (what retention measures from). Encoding and decoding never throw: a line that
 * fails its CRC, its JSON or its shape is reported with the reason, for the caller to drop.
 */
import { crc32 } from "node:zlib";
import { z } from "zod/v4";
import type { JournalEntry } from "../calls/index.js";
import { DEFAULT_MAX_JSON_DEPTH, parseJson } from "../internal/safe-json.js";
import { toolCallResponseBodySchema, type ToolCallResponseBody } from "../wire/index.js";

/** The `format` of a journal file's header line. */
export const JOURNAL_FORMAT = "toolrelay-call-journal";
/** The version of the line format this code writes and reads. */
export const JOURNAL_FORMAT_VERSION = 1;

const time = z.number();
const identity = {
  key: z.string().min(1),
  toolName: z.string(),
  agentId: z.string(),
  conversationId: z.string(),
  toolCallId: z.string(),
  inputSha256: z.string(),
  startedAt: time,
};

const journalLineSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("header"), format: z.literal(JOURNAL_FORMAT), version: z.number().int().positive(), createdAt: time }),
  z.strictObject({ kind: z.literal("start"), at: time, entry: z.strictObject({ ...identity, input: z.unknown().optional() }) }),
  z.strictObject({ kind: z.literal("settle"), at: time, key: z.string().min(1), settledAt: time, response: toolCallResponseBodySchema }),
  z.strictObject({ kind: z.literal("alias"), at: time, alias: z.string().min(1), key: z.string().min(1) }),
  z.strictObject({ kind: z.literal("tombstone"), at: time, entry: z.strictObject({ ...identity, settledAt: time.optional() }) }),
]);

/** The identity of a call in a `start` or `tombstone` line. */
export type JournalLineEntry = Omit<JournalEntry, "state" | "response">;

/** One line of a journal file. */
export type JournalLine =
  | { kind: "header"; format: typeof JOURNAL_FORMAT; version: number; createdAt: number }
  | { kind: "start"; at: number; entry: JournalLineEntry }
  | { kind: "settle"; at: number; key: string; settledAt: number; response: ToolCallResponseBody }
  | { kind: "alias"; at: number; alias: string; key: string }
  | { kind: "tombstone"; at: number; entry: JournalLineEntry };

/** A decoded line, or why it is dropped. */
export type DecodedLine = { ok: true; line: JournalLine } | { ok: false; reason: string };

/** An encoded line (with its newline), or why the value cannot be one (an input JSON cannot carry). */
export type EncodedLine = { ok: true; text: string } | { ok: false; reason: string };

/** The line of `line`: its CRC, a space, its JSON and a newline. */
export function encodeJournalLine(line: JournalLine): EncodedLine {
  let json: string | undefined;
  try {
    json = JSON.stringify(line);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (json === undefined) return { ok: false, reason: "not JSON" };
  return { ok: true, text: `${crcHex(Buffer.from(json, "utf8"))} ${json}\n` };
}

/** One line's bytes (without its newline) as a {@link JournalLine}, or why it is dropped. */
export function decodeJournalLine(bytes: Uint8Array): DecodedLine {
  if (bytes.length < 10 || bytes[8] !== 0x20) return { ok: false, reason: "not a journal line (no CRC prefix)" };
  const claimed = Buffer.from(bytes.subarray(0, 8)).toString("latin1");
  const body = bytes.subarray(9);
  if (!/^[0-9a-f]{8}$/.test(claimed)) return { ok: false, reason: "not a journal line (bad CRC prefix)" };
  if (crcHex(body) !== claimed) return { ok: false, reason: "CRC mismatch" };
  const parsed = parseJson(Buffer.from(body).toString("utf8"), DEFAULT_MAX_JSON_DEPTH + 8);
  if (!parsed.ok) return { ok: false, reason: parsed.error };
  const kind = (parsed.value as { kind?: unknown } | null)?.kind;
  if (!["header", "start", "settle", "alias", "tombstone"].includes(kind as string)) {
    return { ok: false, reason: `unknown line kind ${JSON.stringify(kind) ?? "undefined"}` };
  }
  const checked = journalLineSchema.safeParse(parsed.value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return {
      ok: false,
      reason: `bad ${String(kind)} line: ${issue ? `${issue.path.join(".") || "(line)"}: ${issue.message}` : "invalid"}`,
    };
  }
  // The parsed value, not zod's copy: zod rebuilds objects in its schema's key order, and a stored
  // response must encode byte for byte as it was written.
  return { ok: true, line: parsed.value as JournalLine };
}

/** A whole journal file, split into lines. */
export interface SplitJournal {
  /** The good lines, in file order, with their 1-based line numbers. */
  readonly lines: Array<{ number: number; line: JournalLine }>;
  /** The lines dropped, with their 1-based line numbers and why (all of them). */
  readonly dropped: Array<{ line: number; reason: string }>;
  /** How many lines the file holds, good and dropped, the truncated tail excluded. */
  readonly lineCount: number;
  /** Bytes up to the end of the last complete line (what is kept). */
  readonly keptBytes: number;
  /** Bytes after the last newline: a line cut short by a crash (dropped, and cut from the file). */
  readonly truncatedBytes: number;
}

/** Split and decode a journal file's bytes. Never throws. */
export function splitJournal(bytes: Uint8Array): SplitJournal {
  const lines: SplitJournal["lines"] = [];
  const dropped: SplitJournal["dropped"] = [];
  let start = 0;
  let number = 0;
  for (let end = bytes.indexOf(0x0a); end !== -1; end = bytes.indexOf(0x0a, start)) {
    number++;
    const decoded = decodeJournalLine(bytes.subarray(start, end));
    if (decoded.ok) lines.push({ number, line: decoded.line });
    else dropped.push({ line: number, reason: decoded.reason });
    start = end + 1;
  }
  const truncatedBytes = bytes.length - start;
  if (truncatedBytes > 0) dropped.push({ line: number + 1, reason: `truncated last line (${truncatedBytes} bytes, no newline)` });
  return { lines, dropped, lineCount: number, keptBytes: start, truncatedBytes };
}

/** A line's `entry` back as a {@link JournalEntry} of `state` (absent optional fields left out). */
export function entryOfLine(entry: JournalLineEntry, state: JournalEntry["state"]): JournalEntry {
  return { ...entry, state };
}

/** The `entry` of a `start` or `tombstone` line for `entry` (its response and state left out). */
export function lineEntryOf(entry: JournalEntry, withInput: boolean): JournalLineEntry {
  const { state: _state, response: _response, input, settledAt, ...identity } = entry;
  return {
    ...identity,
    ...(settledAt === undefined ? {} : { settledAt }),
    ...(withInput && input !== undefined ? { input } : {}),
  };
}

function crcHex(bytes: Uint8Array): string {
  return crc32(bytes).toString(16).padStart(8, "0");
}
