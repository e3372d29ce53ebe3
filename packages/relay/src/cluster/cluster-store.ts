/**
 * The cluster's shared state in NATS JetStream key-value buckets (docs/relay-cluster.md "What is
 * shared"): `<name>_leases` (who holds each environment; entries expire after the lease TTL),
 * `<name>_environments` (registrations, device owners and tool registrants; kept until removed)
 * `<name>_calls` (outstanding tool calls; expire after the outstanding-call TTL) and
 * `<name>_usage` (what each tenant holds on each node, for cluster-wide caps). Keys are
 * made of ids the relay issued or of hashes, never of raw client text.
 */
import { createHash } from "node:crypto";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { ToolrelayError, type Timers } from "toolrelay/protocol";
import type { ResolvedClusterOptions } from "./cluster-options.js";
import { KvWriter } from "./kv-writer.js";

export interface ClusterStore {
  readonly connection: NatsConnection;
  readonly leases: KV;
  readonly environments: KV;
  readonly calls: KV;
  /** The writes on a tool call's path to `calls` (kv-writer.ts). */
  readonly callWrites: KvWriter;
  readonly usage: KV;
  close(): Promise<void>;
}

/** A KV key token for any text (KV keys allow only `[-/_=.a-zA-Z0-9]`). */
export function keyToken(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 40);
}

/** Whether a KV write failed because the key exists or its revision moved (create / update lost a race). */
export function isWrongRevision(error: unknown): boolean {
  const text = String((error as { message?: unknown } | undefined)?.message ?? error);
  return /wrong last sequence|key exists|wrong last msg/i.test(text);
}

/** Attempts to create (or open) each bucket at start. */
const BUCKET_ATTEMPTS = 4;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** The JSON in a KV value; `undefined` when it is not JSON. */
export function decodeJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(bytes)) as unknown;
  } catch {
    return undefined;
  }
}

/** Connects to NATS and opens (creating when missing) the cluster's buckets. */
export async function openClusterStore(
  options: ResolvedClusterOptions,
  ttls: { outstandingCallTtlMs: number; usageTtlMs: number; timers: Timers },
): Promise<ClusterStore> {
  let connection: NatsConnection;
  try {
    connection = await connect({
      servers: options.servers,
      name: `toolrelay-relay ${options.nodeId}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      timeout: 5_000,
      // No async stack trace captured per request: it was a large share of a node's CPU per tool call (bench relay-cluster).
      noAsyncTraces: true,
    });
  } catch (error) {
    throw new ToolrelayError("INVALID_OPTIONS", `relay: cannot connect to the cluster's NATS servers (${options.servers.join(", ")})`, {
      cause: error,
    });
  }
  try {
    const manager = new Kvm(connection);
    const replicas = options.replicas;
    // Several nodes starting together create the same replicated buckets at once; JetStream may
    // time one out while it places the replicas: try again (creating an existing bucket opens it).
    const bucket = async (name: string, ttl: number | undefined): Promise<KV> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await manager.create(`${options.name}_${name}`, { history: 1, replicas, ...(ttl === undefined ? {} : { ttl }) });
        } catch (error) {
          if (attempt >= BUCKET_ATTEMPTS) throw error;
          await new Promise((resolve) => ttls.timers.setTimeout(() => resolve(undefined), 500 * attempt));
        }
      }
    };
    const [leases, environments, calls, usage] = await Promise.all([
      bucket("leases", options.leaseTtlMs),
      bucket("environments", undefined),
      bucket("calls", ttls.outstandingCallTtlMs),
      bucket("usage", ttls.usageTtlMs),
    ]);
    const callWrites = new KvWriter(connection, `${options.name}_calls`, { timers: ttls.timers });
    const close = async () => {
      await connection.drain().catch(() => connection.close());
      callWrites.close();
    };
    return { connection, leases, environments, calls, callWrites, usage, close };
  } catch (error) {
    await connection.close().catch(() => {});
    throw new ToolrelayError(
      "INVALID_OPTIONS",
      "relay: cannot open the cluster's key-value buckets (is JetStream enabled on the NATS servers?)",
      {
        cause: error,
      },
    );
  }
}
