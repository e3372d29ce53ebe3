/**
 * `openNatsCallJournal`: connect (or take a connection), open the journal's KV bucket (creating it
 * with file storage, `history: 1`, `max_age` = retention and the replicas asked for), check that an
 * existing bucket keeps records as long and as safely as asked, and hand back the journal.
 */
import { jetstream, StorageType } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { ToolrelayError } from "../errors.js";
import { isTransient } from "./kv-retry.js";
import { KvCallJournal } from "./nats-call-journal.js";
import type { NatsCallJournal } from "./nats-call-journal-options.js";
import {
  type NatsCallJournalOptions,
  type ResolvedNatsCallJournalOptions,
  resolveNatsCallJournalOptions,
} from "./nats-call-journal-options.js";

/** Tries to create (or open) the bucket: several processes creating one replicated bucket at once may time out while JetStream places it. */
const BUCKET_ATTEMPTS = 4;

/**
 * Open the NATS KV call journal. Rejects with `INVALID_OPTIONS` for a bad option (a retention option
 * KV cannot apply, an existing bucket with another retention, replica count or memory storage) and
 * with `CONNECT_FAILED` when the servers cannot be reached within `connectTimeoutMs` or do not
 * have JetStream.
 *
 * ```ts
 * const journal = await openNatsCallJournal({ servers: ["nats://n1:4222", "nats://n2:4222", "nats://n3:4222"], replicas: 3 });
 * const session = await createSession({ ...options, journal });
 * // ... at shutdown, after the sessions:
 * await journal.close();
 * ```
 */
export async function openNatsCallJournal(options: NatsCallJournalOptions): Promise<NatsCallJournal> {
  const resolved = resolveNatsCallJournalOptions(options);
  const ownsConnection = resolved.connection === undefined;
  const connection = resolved.connection ?? (await connectTo(resolved));
  if (connection.isClosed()) throw new ToolrelayError("INVALID_OPTIONS", "openNatsCallJournal(): the connection is closed");
  try {
    const kv = await openBucket(connection, resolved);
    await checkBucket(kv, resolved);
    return new KvCallJournal({
      kv,
      bucket: resolved.bucket,
      connection,
      ownsConnection,
      storeInputs: resolved.storeInputs,
      retryWindowMs: resolved.retryWindowMs,
      timers: resolved.timers,
    });
  } catch (error) {
    if (ownsConnection) await connection.close().catch(() => undefined);
    if (ToolrelayError.is(error)) throw error;
    throw new ToolrelayError(
      "CONNECT_FAILED",
      `openNatsCallJournal(): cannot open the KV bucket "${resolved.bucket}" (is JetStream enabled on the NATS servers?): ${messageOf(error)}`,
      { cause: error },
    );
  }
}

async function connectTo(options: ResolvedNatsCallJournalOptions): Promise<NatsConnection> {
  const servers = options.servers!;
  try {
    return await connect({
      servers,
      name: "toolrelay-call-journal",
      timeout: options.connectTimeoutMs,
      // Once connected, never give up: a write waits (up to retryWindowMs) for a server to come back.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      noAsyncTraces: true,
    });
  } catch (error) {
    throw new ToolrelayError(
      "CONNECT_FAILED",
      `openNatsCallJournal(): cannot connect to NATS at ${servers.map(withoutCredentials).join(", ")}: ${messageOf(error)}`,
      {
        cause: error,
        details: { servers: servers.map(withoutCredentials) },
      },
    );
  }
}

async function openBucket(connection: NatsConnection, options: ResolvedNatsCallJournalOptions): Promise<KV> {
  const manager = new Kvm(jetstream(connection, { timeout: options.requestTimeoutMs }));
  for (let attempt = 1; ; attempt++) {
    try {
      return await manager.create(options.bucket, {
        history: 1,
        replicas: options.replicas,
        ttl: options.retentionMs,
        storage: StorageType.File,
        // Reads from the stream leader, not any replica: a record another process just wrote is seen.
        allow_direct: false,
        description: "toolrelay call journal (toolrelay/nats-journal)",
      });
    } catch (error) {
      if (attempt >= BUCKET_ATTEMPTS || !isTransient(error)) throw error;
      await new Promise<void>((resolve) => options.timers.setTimeout(resolve, 250 * attempt));
    }
  }
}

/** An existing bucket must keep records as long and on as many replicas as asked, on disk. */
async function checkBucket(kv: KV, options: ResolvedNatsCallJournalOptions): Promise<void> {
  const status = await kv.status();
  const found = { retentionMs: status.ttl, replicas: status.replicas, storage: status.storage };
  const problems: string[] = [];
  if (found.retentionMs !== options.retentionMs)
    problems.push(`max_age ${found.retentionMs} ms, not retention.retentionMs ${options.retentionMs}`);
  if (found.replicas !== options.replicas) problems.push(`${found.replicas} replica(s), not replicas ${options.replicas}`);
  if (found.storage !== StorageType.File) problems.push(`${found.storage} storage, not file (records would not outlive a server restart)`);
  if (problems.length === 0) return;
  throw new ToolrelayError(
    "INVALID_OPTIONS",
    `openNatsCallJournal(): the existing bucket "${options.bucket}" has ${problems.join(", ")}: pass the bucket's settings, or another bucket`,
    { details: { bucket: options.bucket, found, asked: { retentionMs: options.retentionMs, replicas: options.replicas } } },
  );
}

/** A server URL without its user and password (they never go into an error). */
function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^/@]*@/, "//");
}

function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | undefined)?.message;
  return typeof message === "string" ? message : String(error);
}
