/**
 * The relay's cluster mode (docs/relay-cluster.md): several relay nodes share environments,
 * leases and outstanding tool calls in NATS JetStream's key-value store. Without these options
 * the relay is the single embedded process it always was.
 */
import { randomUUID } from "node:crypto";
import { ToolrelayError } from "toolrelay/protocol";

/** `RelayOptions.cluster`: where the shared state lives, and how this node takes part. */
export interface RelayClusterOptions {
  /** NATS server URLs (`nats://host:4222`); every node of a cluster names the same servers. */
  servers: string[];
  /**
   * This node's name in leases and logs (letters, digits, `-`, `_`). Default: `node-` and 8
   * random hex digits (a restarted node is a new node).
   */
  nodeId?: string | undefined;
  /** Prefix of the key-value buckets, so that several clusters can share NATS servers. Default `"toolrelay"`. */
  name?: string | undefined;
  /** Copies JetStream keeps of each bucket: 1, or 3 (production) on a 3-server NATS cluster. Default 1. */
  replicas?: 1 | 3 | 5 | undefined;
  /**
   * How long an environment's lease lasts without renewal, in ms. A node renews it every third of
   * this; a node that stops (killed, frozen) loses its environments after at most this long, and
   * a frozen node that wakes later writes nothing. Default 3,000; at least 600.
   */
  leaseTtlMs?: number | undefined;
  /**
   * The address other nodes reach this node at for piped sockets (`host:port`). Default: the
   * relay's own `host` and port (right when all nodes share a network, as on one machine).
   */
  advertiseAddress?: string | undefined;
}

/** {@link RelayClusterOptions} with every default applied (what a cluster node runs with). */
export interface ResolvedClusterOptions {
  servers: string[];
  nodeId: string;
  name: string;
  replicas: 1 | 3 | 5;
  leaseTtlMs: number;
  advertiseAddress: string | undefined;
}

export const DEFAULT_LEASE_TTL_MS = 3_000;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Checks cluster options; throws INVALID_OPTIONS naming the bad one. */
export function resolveClusterOptions(options: RelayClusterOptions): ResolvedClusterOptions {
  const invalid = (message: string) => new ToolrelayError("INVALID_OPTIONS", `relay: cluster.${message}`);
  if (!Array.isArray(options.servers) || options.servers.length === 0) throw invalid("servers must name at least one NATS server");
  for (const server of options.servers) {
    if (typeof server !== "string" || !/^(nats|tls):\/\/[^\s]+$/.test(server))
      throw invalid(`servers: ${JSON.stringify(server)} is not a nats:// or tls:// URL`);
  }
  const nodeId = options.nodeId ?? `node-${randomUUID().slice(0, 8)}`;
  if (!NAME.test(nodeId)) throw invalid("nodeId must be 1..64 letters, digits, - or _");
  const name = options.name ?? "toolrelay";
  if (!NAME.test(name)) throw invalid("name must be 1..64 letters, digits, - or _");
  const replicas = options.replicas ?? 1;
  if (replicas !== 1 && replicas !== 3 && replicas !== 5) throw invalid("replicas must be 1, 3 or 5");
  const leaseTtlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  if (!Number.isSafeInteger(leaseTtlMs) || leaseTtlMs < 600 || leaseTtlMs > 600_000)
    throw invalid("leaseTtlMs must be an integer from 600 to 600000");
  const advertiseAddress = options.advertiseAddress;
  if (advertiseAddress !== undefined && !/^[^\s/]+:\d{1,5}$/.test(advertiseAddress)) throw invalid("advertiseAddress must be host:port");
  return { servers: [...options.servers], nodeId, name, replicas, leaseTtlMs, advertiseAddress };
}
