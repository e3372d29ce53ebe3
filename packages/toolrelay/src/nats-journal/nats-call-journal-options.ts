/**
 * The options of {@link openNatsCallJournal} and their checks. JetStream KV on nats-server 2.9 has
 * one age limit per bucket (`max_age`) and no per-key TTL, so of {@link JournalRetention} only
 * `retentionMs` (the bucket's `max_age`) and `storeInputs` apply; the rest is rejected.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { CallJournal, JournalRetention } from "../calls/call-journal.js";
import { DEFAULT_JOURNAL_RETENTION } from "../calls/call-journal.js";
import { ToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";

/** What {@link openNatsCallJournal} resolves with: a call journal in the KV bucket `bucket`. */
export interface NatsCallJournal extends CallJournal {
  /** Always `"nats-kv"`. */
  readonly kind: "nats-kv";
  /** The KV bucket its records live in. */
  readonly bucket: string;
}

/**
 * A NATS connection, as `connect()` of `@nats-io/transport-node` 3.x returns it. Typed by the few
 * members the journal checks, so that this entry point's declarations do not pull in the NATS
 * client's own (they fail to compile under `exactOptionalPropertyTypes` with `skipLibCheck: false`).
 */
export interface NatsConnectionLike {
  request(...args: never[]): Promise<unknown>;
  isClosed(): boolean;
  close(): Promise<void>;
}

/** Where the journal's records live: NATS servers to connect to, or a connection you own. */
export type NatsCallJournalOptions = NatsCallJournalCommonOptions &
  (
    | {
        /** NATS server URLs (`nats://host:4222`): the journal opens its own connection and drains it on `close()`. */
        servers: string | string[];
        connection?: undefined;
      }
    | {
        /** A connection you opened (`connect()` of `@nats-io/transport-node`): the journal uses it and never closes it. */
        connection: NatsConnectionLike;
        servers?: undefined;
      }
  );

/** The options of {@link openNatsCallJournal} besides where its records live. */
export interface NatsCallJournalCommonOptions {
  /** The KV bucket (letters, digits, `_`, `-`); created with file storage when missing. Default `"toolrelay_calls"`. */
  bucket?: string | undefined;
  /**
   * Copies of each record (JetStream replicas, 1–5) when the bucket is created. Default 1: an
   * acknowledged record outlives a `kill -9` of the server (it is in the server's file store), but
   * not the loss of its disk, nor an OS crash or power loss before the server's next fsync
   * (nats-server syncs every 2 minutes by default; 2.9 cannot change that). Production wants 3 (a
   * 3-server cluster): a write is acknowledged once a quorum stored it, and a record survives
   * losing any one server. An existing bucket with another count is rejected.
   */
  replicas?: number | undefined;
  /**
   * What the journal keeps. Only `retentionMs` (the bucket's `max_age`, measured from a key's last
   * write; default 86,400,000 = 24 h) and `storeInputs` (default `false`) apply. KV on nats-server
   * 2.9 has no per-key TTL: a record is removed whole when it ages out, so there is no tombstone
   * phase, and `tombstoneRetentionMs`, `maxEntries`, `maxResponseChars` and `maxTombstones` are
   * rejected (`INVALID_OPTIONS`). An existing bucket with another `max_age` is rejected too.
   */
  retention?: JournalRetention | undefined;
  /** How long to wait for the servers at open, in ms. Default 5,000. */
  connectTimeoutMs?: number | undefined;
  /** How long one KV request waits for its answer, in ms. Default 5,000. */
  requestTimeoutMs?: number | undefined;
  /**
   * How long a read or write keeps retrying while the servers do not answer (a reconnect, a
   * stream leader election), in ms; then it rejects. Default 15,000.
   */
  retryWindowMs?: number | undefined;
  /** The clock of the retries' backoff and window. Default: the global timers. */
  timers?: Timers | undefined;
}

/** The checked options with their defaults. */
export interface ResolvedNatsCallJournalOptions {
  servers: string[] | undefined;
  connection: NatsConnection | undefined;
  bucket: string;
  replicas: number;
  retentionMs: number;
  storeInputs: boolean;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  retryWindowMs: number;
  timers: Timers;
}

const KNOWN_OPTIONS = new Set([
  "servers",
  "connection",
  "bucket",
  "replicas",
  "retention",
  "connectTimeoutMs",
  "requestTimeoutMs",
  "retryWindowMs",
  "timers",
]);
const KNOWN_RETENTION = new Set(Object.keys(DEFAULT_JOURNAL_RETENTION));
const NOT_ON_KV = ["tombstoneRetentionMs", "maxEntries", "maxResponseChars", "maxTombstones"] as const;
/** Largest timer delay Node honours (2^31 - 1 ms, about 24.8 days). */
const MAX_DELAY_MS = 2_147_483_647;
/** `max_age` is nanoseconds in an int64: ~292 years; a century is plenty. */
const MAX_RETENTION_MS = 100 * 365 * 86_400_000;

/** Check `options`; throws `ToolrelayError("INVALID_OPTIONS")` naming the option. */
export function resolveNatsCallJournalOptions(options: NatsCallJournalOptions): ResolvedNatsCallJournalOptions {
  if (typeof options !== "object" || options === null) fail("openNatsCallJournal() needs options: { servers } or { connection }");
  const record = options as unknown as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !KNOWN_OPTIONS.has(key) && record[key] !== undefined);
  if (unknown.length > 0)
    fail(`openNatsCallJournal(): unknown option${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => `"${key}"`).join(", ")}`);
  const { servers, connection, bucket, replicas, timers } = record;
  if ((servers === undefined) === (connection === undefined)) fail("openNatsCallJournal() takes either servers or connection, exactly one");
  let serverList: string[] | undefined;
  if (servers !== undefined) {
    const list: unknown[] | undefined = typeof servers === "string" ? [servers] : Array.isArray(servers) ? servers : undefined;
    if (list === undefined || list.length === 0 || !list.every((url) => typeof url === "string" && url.trim() !== ""))
      fail("openNatsCallJournal(): servers must be a URL or a non-empty array of URLs");
    serverList = [...(list as string[])];
  }
  if (
    connection !== undefined &&
    (typeof connection !== "object" || connection === null || typeof (connection as NatsConnection).request !== "function")
  )
    fail("openNatsCallJournal(): connection must be a NatsConnection (from @nats-io/transport-node connect())");
  if (bucket !== undefined && (typeof bucket !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(bucket)))
    fail(`openNatsCallJournal(): bucket must be 1-64 letters, digits, "_" or "-", got ${JSON.stringify(bucket)}`);
  if (replicas !== undefined && !isIntegerIn(replicas, 1, 5))
    fail(`openNatsCallJournal(): replicas must be an integer in 1-5, got ${String(replicas)}`);
  if (timers !== undefined && (typeof timers !== "object" || timers === null || typeof (timers as Timers).now !== "function"))
    fail("openNatsCallJournal(): timers must be a Timers object (setTimeout, clearTimeout, now)");
  const retention = resolveRetention(record.retention);
  return {
    servers: serverList,
    connection: connection as NatsConnection | undefined,
    bucket: (bucket as string | undefined) ?? "toolrelay_calls",
    replicas: (replicas as number | undefined) ?? 1,
    ...retention,
    connectTimeoutMs: milliseconds(record, "connectTimeoutMs", 5_000),
    requestTimeoutMs: milliseconds(record, "requestTimeoutMs", 5_000),
    retryWindowMs: milliseconds(record, "retryWindowMs", 15_000, 0),
    timers: (timers as Timers | undefined) ?? systemTimers,
  };
}

function resolveRetention(value: unknown): { retentionMs: number; storeInputs: boolean } {
  if (value === undefined) return { retentionMs: DEFAULT_JOURNAL_RETENTION.retentionMs, storeInputs: false };
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail("openNatsCallJournal(): retention must be an object");
  const retention = value as Record<string, unknown>;
  const unknown = Object.keys(retention).filter((key) => !KNOWN_RETENTION.has(key) && retention[key] !== undefined);
  if (unknown.length > 0)
    fail(`openNatsCallJournal(): unknown retention option${unknown.length > 1 ? "s" : ""} ${unknown.map((key) => `"${key}"`).join(", ")}`);
  const cannot = NOT_ON_KV.filter((key) => retention[key] !== undefined);
  if (cannot.length > 0) {
    fail(
      `openNatsCallJournal(): retention.${cannot.join(", retention.")} cannot apply to a NATS KV journal: a bucket has one age limit (retentionMs, its max_age) and no per-key TTL on nats-server 2.9, so a record is removed whole when it ages out (no tombstones) and nothing is evicted by count or size`,
    );
  }
  const { retentionMs, storeInputs } = retention;
  if (retentionMs !== undefined && !isIntegerIn(retentionMs, 1_000, MAX_RETENTION_MS))
    fail(`openNatsCallJournal(): retention.retentionMs must be an integer in 1000-${MAX_RETENTION_MS} (ms), got ${String(retentionMs)}`);
  if (storeInputs !== undefined && typeof storeInputs !== "boolean") fail("openNatsCallJournal(): retention.storeInputs must be a boolean");
  return {
    retentionMs: (retentionMs as number | undefined) ?? DEFAULT_JOURNAL_RETENTION.retentionMs,
    storeInputs: (storeInputs as boolean | undefined) ?? false,
  };
}

function milliseconds(record: Record<string, unknown>, option: string, fallback: number, min = 1): number {
  const value = record[option];
  if (value === undefined) return fallback;
  if (!isIntegerIn(value, min, MAX_DELAY_MS))
    fail(`openNatsCallJournal(): ${option} must be an integer in ${min}-${MAX_DELAY_MS} (ms), got ${String(value)}`);
  return value as number;
}

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

function fail(message: string): never {
  throw new ToolrelayError("INVALID_OPTIONS", message);
}
