/**
 * The call journal: where a session writes each call it runs before the callback starts
 * (`started`) and again when it settles (the response the model got), so that a process that
 * restarts answers a re-offered call from its record instead of running it twice. The call table
 * (call-table.ts) consults it; implementations: {@link MemoryCallJournal} (this file's neighbour,
 * today's behaviour: nothing outlives the process), the file journal (`openFileCallJournal`) and
 * the NATS JetStream KV journal (`toolrelay/nats-journal`). See docs/call-journal.md.
 *
 * ```text
 *  (absent) ──start (before the callback runs; durable when it resolves)──▶ started
 *  started ──settle (the response the model got)──▶ settled
 *  started | settled ──retention──▶ expired (a tombstone: key and times, no response) ──tombstone retention──▶ (absent)
 * ```
 *
 * A journal is keyed by the call's idempotency key (`idempotencyKeyOf`: agent, conversation,
 * tool call id and the request id the call first arrived with): a process that meets the same
 * request again derives the same key. A call re-attempted under a second request id is found
 * under that request's key too (`alias`).
 */
import { createHash } from "node:crypto";
import type { ToolCallResponseBody } from "../wire/index.js";

/** Where a call's record stands: it `started` (the callback may have run), `settled` (with its response), or `expired` (its record aged out: outcome unknown). */
export type JournalEntryState = "started" | "settled" | "expired";

/** What a journal keeps of one call: no input unless the journal was asked to store inputs. */
export interface JournalEntry {
  /** The call's idempotency key (`tr1_…`): the journal's key. */
  readonly key: string;
  readonly state: JournalEntryState;
  readonly toolName: string;
  readonly agentId: string;
  readonly conversationId: string;
  readonly toolCallId: string;
  /** SHA-256 (base64url) of the call's canonical input JSON. */
  readonly inputSha256: string;
  /** The input itself: only when the journal stores inputs (off by default). */
  readonly input?: unknown;
  /** When the callback was about to start (epoch ms). */
  readonly startedAt: number;
  /** When it settled (epoch ms); absent while `started`. */
  readonly settledAt?: number | undefined;
  /** The response the model got, byte for byte once encoded: only while `settled`. */
  readonly response?: ToolCallResponseBody | undefined;
}

/** How a journal bounds what it keeps (each implementation documents its own defaults). */
export interface JournalRetention {
  /**
   * A record (started or settled, with its response) is kept this long after its last write, in
   * ms; then it becomes a tombstone (a re-offer gets "outcome unknown", never a second run).
   * Default 86,400,000 (24 h): longer than any re-offer (the runtime waits 300 s for a call, the
   * reference relay keeps an unanswered call 15 min).
   */
  retentionMs?: number | undefined;
  /** A tombstone is kept this long after its record's last write, in ms. Default 604,800,000 (7 days). */
  tombstoneRetentionMs?: number | undefined;
  /** Records kept at most (the oldest settled ones become tombstones first). Default 100,000. */
  maxEntries?: number | undefined;
  /** Characters of stored responses kept at most (the oldest settled records become tombstones first). Default 67,108,864 (64 Mi). */
  maxResponseChars?: number | undefined;
  /** Tombstones kept at most (the oldest go first). Default 1,000,000. */
  maxTombstones?: number | undefined;
  /** Store each call's input in its record (default `false`: only its SHA-256). */
  storeInputs?: boolean | undefined;
}

/** The defaults of {@link JournalRetention}. */
export const DEFAULT_JOURNAL_RETENTION: Readonly<Required<JournalRetention>> = Object.freeze({
  retentionMs: 86_400_000,
  tombstoneRetentionMs: 604_800_000,
  maxEntries: 100_000,
  maxResponseChars: 67_108_864,
  maxTombstones: 1_000_000,
  storeInputs: false,
});

/** A call journal. Every method may be called before an earlier one's promise settled; writes of one key are applied in call order. */
export interface CallJournal {
  /** What this journal is, for logs and errors: `memory`, `file`, `nats-kv`. */
  readonly kind: string;
  /** The record of `key`, or of the call `key` was aliased to (its own `key` then), if the journal holds one. Rejects only when the journal cannot be read. */
  find(key: string): JournalEntry | undefined | Promise<JournalEntry | undefined>;
  /**
   * Record that the call `entry` (state `started`) is about to run; resolves once the record is
   * durable, with `undefined` when it was written, or with the record that was already there (a
   * previous life of this process, or another process, got there first: then nothing was
   * written). `input` is kept only when the journal stores inputs. Rejects when it cannot write
   * (the call must then not run).
   */
  start(entry: JournalEntry, input: unknown): Promise<JournalEntry | undefined>;
  /** The call `key` settled with `response` at `settledAt` (epoch ms). Resolves once durable. */
  settle(key: string, response: ToolCallResponseBody, settledAt: number): Promise<void>;
  /** The call `key` was asked again under another request id, whose key is `alias`: `find(alias)` finds it. */
  alias(alias: string, key: string): Promise<void>;
  /** Write what is pending and let go of the journal's resources (a file lock, a connection). Idempotent. */
  close(): Promise<void>;
}

/** The SHA-256 (base64url) of a call's canonical input, from its `inputDigest` (call-key.ts: the canonical text itself up to 64 characters, else `#` + this very digest). */
export function journalInputDigest(inputDigest: string): string {
  if (inputDigest.startsWith("#")) return inputDigest.slice(1);
  return createHash("sha256").update(inputDigest).digest("base64url");
}
