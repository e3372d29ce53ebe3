/**
 * The call journal in a NATS JetStream key-value bucket, shared by every process (and machine) that
 * opens the same bucket: `start` is a KV `create` (written only if the key is absent, so of two
 * processes racing on one call exactly one gets to run it), `settle` an `update` at the revision
 * `start` wrote (compare-and-set), `alias` a `create` of an alias key, `find` a `get` that follows
 * one alias. A write is durable when JetStream acknowledged it: stored in the bucket's file store
 * on the stream leader (R1), or on a quorum of its replicas (R3). See journal-kv-record.ts for what
 * is stored, and docs/call-journal.md.
 */
import { randomUUID } from "node:crypto";
import type { KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import type { CallJournal, JournalEntry } from "../calls/call-journal.js";
import { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import type { ToolCallResponseBody } from "../wire/index.js";
import {
  aliasKvKey,
  type DecodedValue,
  decodeValue,
  encodeAlias,
  encodeStoredCall,
  entryOf,
  expiredEntry,
  recordKvKey,
  type StoredCall,
  settledRecord,
  startedRecord,
} from "./journal-kv-record.js";
import { isWrongRevision, journalError, withRetry } from "./kv-retry.js";
import { PerKeyQueue } from "./per-key-queue.js";

/** What the journal needs once its bucket is open (see `openNatsCallJournal`). */
export interface NatsCallJournalParts {
  readonly kv: KV;
  readonly bucket: string;
  readonly connection: NatsConnection;
  /** Whether `close()` drains the connection (the journal opened it). */
  readonly ownsConnection: boolean;
  readonly storeInputs: boolean;
  readonly retryWindowMs: number;
  readonly timers: Timers;
}

/** A record this process wrote or read at a revision, kept until it settles it. */
interface KnownRecord {
  readonly revision: number;
  readonly record: StoredCall;
}

/** Revisions kept for a later `settle` at most; beyond, the oldest is read again when it settles. */
const MAX_KNOWN_RECORDS = 10_000;
/** Tries of one write that keeps losing races to other writers before it gives up. */
const MAX_RACES = 5;

/** A {@link CallJournal} in a NATS JetStream KV bucket. Open one with `openNatsCallJournal`. */
export class KvCallJournal implements CallJournal {
  readonly kind = "nats-kv";
  /** The KV bucket holding the records. */
  readonly bucket: string;
  readonly #kv: KV;
  readonly #connection: NatsConnection;
  readonly #ownsConnection: boolean;
  readonly #storeInputs: boolean;
  readonly #retryWindowMs: number;
  readonly #timers: Timers;
  readonly #queue = new PerKeyQueue();
  /** By KV key: the revision of a started record this process may settle. */
  readonly #known = new Map<string, KnownRecord>();
  #closing: Promise<void> | undefined;

  constructor(parts: NatsCallJournalParts) {
    this.bucket = parts.bucket;
    this.#kv = parts.kv;
    this.#connection = parts.connection;
    this.#ownsConnection = parts.ownsConnection;
    this.#storeInputs = parts.storeInputs;
    this.#retryWindowMs = parts.retryWindowMs;
    this.#timers = parts.timers;
  }

  /** The record of `key` or of the call it aliases; an unreadable record (or an alias whose call is gone) is `expired`. */
  find(key: string): Promise<JournalEntry | undefined> {
    return this.#enqueue(key, `find ${key}`, async () => {
      const [own, alias] = await Promise.all([this.#read(recordKvKey(key), key), this.#read(aliasKvKey(key), key)]);
      if (own !== undefined) return own.value.kind === "call" ? entryOf(own.value.record) : expiredEntry(key);
      if (alias === undefined) return undefined;
      if (alias.value.kind !== "alias") return expiredEntry(key);
      const target = alias.value.target;
      const call = await this.#read(recordKvKey(target), target);
      // The alias says the call existed: its record aged out, or is unreadable: outcome unknown.
      return call?.value.kind === "call" ? entryOf(call.value.record) : expiredEntry(target);
    });
  }

  /** Create the call's record unless one exists; resolves `undefined` once the server acknowledged it, or with the record found. */
  start(entry: JournalEntry, input: unknown): Promise<JournalEntry | undefined> {
    if (typeof entry?.key !== "string" || entry.key === "" || entry.state !== "started")
      return Promise.reject(new ToolrelayError("INVALID_OPTIONS", "nats-kv journal: start() takes an entry in state started with a key"));
    return this.#enqueue(entry.key, `start ${entry.key}`, async () => {
      const kvKey = recordKvKey(entry.key);
      const record = startedRecord(entry, randomUUID(), this.#storeInputs ? { value: input } : undefined);
      const bytes = encodeStoredCall(record);
      if (bytes === undefined) throw new ToolrelayError("JOURNAL_FAILED", `nats-kv journal: the input of ${entry.key} is not JSON`);
      for (let race = 0; race < MAX_RACES; race++) {
        try {
          this.#remember(kvKey, await this.#retry(() => this.#kv.create(kvKey, bytes)), record);
          return undefined;
        } catch (error) {
          if (!isWrongRevision(error)) throw error;
        }
        const existing = await this.#read(kvKey, entry.key);
        if (existing === undefined) continue; // aged out (or deleted) since: create again
        if (existing.value.kind !== "call") return expiredEntry(entry.key);
        const found = existing.value.record;
        // Our own create, whose acknowledgement was lost and whose retry found it.
        if (found.claim === record.claim) return void this.#remember(kvKey, existing.revision, found);
        // Another life got there first: an idempotent tool may run again and settle this record.
        if (found.state === "started") this.#remember(kvKey, existing.revision, found);
        return entryOf(found);
      }
      throw new ToolrelayError("JOURNAL_FAILED", `nats-kv journal: start ${entry.key}: the key kept changing under ${MAX_RACES} tries`);
    });
  }

  /** Update the started record to settled (compare-and-set at its revision); a record another process settled first stays as it is. */
  settle(key: string, response: ToolCallResponseBody, settledAt: number): Promise<void> {
    return this.#enqueue(key, `settle ${key}`, async () => {
      const kvKey = recordKvKey(key);
      let current = this.#known.get(kvKey) ?? (await this.#readCall(kvKey, key));
      for (let race = 0; race < MAX_RACES; race++) {
        if (current === undefined)
          throw new ToolrelayError("NOT_FOUND", `nats-kv journal: settle ${key}: no record of the call (never started here, or aged out)`);
        if (current.record.state === "settled") return void this.#known.delete(kvKey);
        const bytes = encodeStoredCall(settledRecord(current.record, response, settledAt));
        if (bytes === undefined) throw new ToolrelayError("JOURNAL_FAILED", `nats-kv journal: settle ${key}: the response is not JSON`);
        const revision = current.revision;
        try {
          await this.#retry(() => this.#kv.update(kvKey, bytes, revision));
          return void this.#known.delete(kvKey);
        } catch (error) {
          if (!isWrongRevision(error)) throw error;
        }
        // Moved since: read it again (settled by our own lost-acknowledgement write, or by another process).
        current = await this.#readCall(kvKey, key);
      }
      throw new ToolrelayError("JOURNAL_FAILED", `nats-kv journal: settle ${key}: the record kept changing under ${MAX_RACES} tries`);
    });
  }

  /** Create the alias `alias` → `key` (an existing alias stays as it is). */
  alias(alias: string, key: string): Promise<void> {
    return this.#enqueue(alias, `alias ${alias}`, async () => {
      try {
        await this.#retry(() => this.#kv.create(aliasKvKey(alias), encodeAlias(alias, key)));
      } catch (error) {
        if (!isWrongRevision(error)) throw error;
      }
    });
  }

  /** Wait for the writes given so far, then drain the connection if the journal opened it. Idempotent; later calls reject. */
  close(): Promise<void> {
    this.#closing ??= this.#queue.idle().then(async () => {
      this.#known.clear();
      if (!this.#ownsConnection) return;
      await this.#connection.drain().catch(() => this.#connection.close().catch(() => undefined));
    });
    return this.#closing;
  }

  /** Run `task` in `key`'s queue; its failure leaves as a ToolrelayError naming `what`. Rejects at once after `close()`. */
  #enqueue<T>(key: string, what: string, task: () => Promise<T>): Promise<T> {
    if (this.#closing !== undefined)
      return Promise.reject(new ToolrelayError("CONNECTION_CLOSED", `nats-kv journal: ${what}: the journal is closed`));
    if (typeof key !== "string" || key === "")
      return Promise.reject(new ToolrelayError("INVALID_OPTIONS", `nats-kv journal: ${what}: the key must be a non-empty string`));
    return this.#queue.run(key, async () => {
      try {
        return await task();
      } catch (error) {
        throw journalError(error, what);
      }
    });
  }

  /** The live value under `kvKey` (the journal key `key` names it), decoded; `undefined` when absent or deleted. */
  async #read(kvKey: string, key: string): Promise<{ revision: number; value: DecodedValue } | undefined> {
    const entry = await this.#retry(() => this.#kv.get(kvKey));
    if (entry === null || entry.operation !== "PUT") return undefined;
    const value = decodeValue(entry.value, key);
    // A call's key holds calls, an alias key aliases: anything else there is unreadable.
    const expected = kvKey.startsWith("c.") ? "call" : "alias";
    const fits = value.kind === "invalid" || value.kind === expected;
    return { revision: entry.revision, value: fits ? value : { kind: "invalid", reason: `${value.kind} value under ${kvKey}` } };
  }

  /** The call record under `kvKey` at its revision; `undefined` when absent; throws when unreadable (it is left as it is). */
  async #readCall(kvKey: string, key: string): Promise<KnownRecord | undefined> {
    const read = await this.#read(kvKey, key);
    if (read === undefined) return undefined;
    if (read.value.kind !== "call")
      throw new ToolrelayError(
        "JOURNAL_FAILED",
        `nats-kv journal: the record of ${key} is unreadable; left as it is (find answers "expired")`,
      );
    return { revision: read.revision, record: read.value.record };
  }

  #remember(kvKey: string, revision: number, record: StoredCall): void {
    this.#known.delete(kvKey);
    this.#known.set(kvKey, { revision, record });
    if (this.#known.size > MAX_KNOWN_RECORDS) this.#known.delete(this.#known.keys().next().value!);
  }

  #retry<T>(operation: () => Promise<T>): Promise<T> {
    return withRetry(operation, this.#timers, this.#retryWindowMs, () => this.#connection.isClosed());
  }
}
