/**
 * Which node holds each environment (docs/relay-cluster.md "Leases and fencing"): a key per
 * environment in the `<name>_leases` bucket, made with create-if-absent, renewed by compare-and-set
 * every third of the TTL, and gone by itself when its holder stops renewing. The holder counts its
 * lease valid only until the time it sent its last successful renewal plus five sixths of the TTL —
 * before the key can expire on the server — so a node that was frozen (SIGSTOP, a long pause) and
 * wakes after losing its lease sees that first, by its own clock, and writes nothing more.
 */
import type { KV } from "@nats-io/kv";
import { unrefTimer, type TimerHandle, type Timers } from "toolrelay/protocol";
import type { RelayLogger } from "../relay-options.js";
import { decodeJson, encodeJson, isWrongRevision } from "./cluster-store.js";

/** What a lease says about its holder (read by any node). */
export interface LeaseHolder {
  nodeId: string;
  /** `host:port` other nodes pipe sockets to. */
  address: string;
  /** Whether the environment's listener is connected at the holder. */
  listenerReady: boolean;
  /** When the listener connected (epoch ms), while it is. */
  connectedAt: number | undefined;
}

interface HeldLease {
  revision: number;
  validUntil: number;
  value: LeaseHolder;
  /** The renewal on its way, if any (a release waits for it: it changes the revision). */
  renewal: Promise<void> | undefined;
}

export interface EnvironmentLeasesOptions {
  kv: KV;
  nodeId: string;
  address: string;
  ttlMs: number;
  timers: Timers;
  logger: RelayLogger;
  /** This node lost the lease of `connectionId` (another node took it, or it could not renew in time). */
  onLost(connectionId: string): void;
}

function parseHolder(value: unknown): LeaseHolder | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.nodeId !== "string" || typeof record.address !== "string") return undefined;
  return {
    nodeId: record.nodeId,
    address: record.address,
    listenerReady: record.listenerReady === true,
    connectedAt: typeof record.connectedAt === "number" ? record.connectedAt : undefined,
  };
}

export class EnvironmentLeases {
  #options: EnvironmentLeasesOptions;
  #held = new Map<string, HeldLease>();
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(options: EnvironmentLeasesOptions) {
    this.#options = options;
    this.#schedule();
  }

  /** The node holding `connectionId` now, as the bucket says (`undefined`: nobody). */
  /** Every environment some node holds a lease on now (keys only). */
  async leased(): Promise<string[]> {
    const connectionIds: string[] = [];
    for await (const key of await this.#options.kv.keys()) connectionIds.push(key);
    return connectionIds;
  }

  async holder(connectionId: string): Promise<LeaseHolder | undefined> {
    const entry = await this.#options.kv.get(connectionId);
    if (entry?.operation !== "PUT") return undefined;
    return parseHolder(decodeJson(entry.value));
  }

  /** Takes the lease if nobody holds it; true when this node holds it (now or already). */
  async acquire(connectionId: string): Promise<boolean> {
    if (this.held(connectionId)) return true;
    if (this.#stopped) return false;
    const value: LeaseHolder = {
      nodeId: this.#options.nodeId,
      address: this.#options.address,
      listenerReady: false,
      connectedAt: undefined,
    };
    const sentAt = this.#options.timers.now();
    try {
      const revision = await this.#options.kv.create(connectionId, encodeJson(value));
      this.#held.set(connectionId, { revision, validUntil: this.#validFrom(sentAt), value, renewal: undefined });
      this.#options.logger.info("relay: environment lease taken", { connectionId, node: this.#options.nodeId });
      return true;
    } catch (error) {
      if (isWrongRevision(error)) return false;
      throw error;
    }
  }

  /** Whether this node holds the lease of `connectionId` and, by its own clock, still may act on it. */
  held(connectionId: string): boolean {
    const lease = this.#held.get(connectionId);
    if (!lease) return false;
    if (this.#options.timers.now() < lease.validUntil) return true;
    this.#lose(connectionId, "its validity ran out before a renewal");
    return false;
  }

  /** Records the listener's state in the lease (read by other nodes for `GET /v1/environments`). */
  setListener(connectionId: string, listenerReady: boolean, connectedAt: number | undefined): void {
    const lease = this.#held.get(connectionId);
    if (!lease) return;
    lease.value = { ...lease.value, listenerReady, connectedAt };
    void this.#renew(connectionId, lease);
  }

  /** Gives the lease up (another node may take it at once). */
  async release(connectionId: string): Promise<void> {
    const lease = this.#held.get(connectionId);
    if (!lease) return;
    this.#held.delete(connectionId);
    await this.#deleteKey(connectionId, lease);
  }

  /** Deletes the key if it is still this lease's revision — after a renewal on its way, which moves the revision. */
  async #deleteKey(connectionId: string, lease: HeldLease): Promise<void> {
    await lease.renewal;
    await this.#options.kv.delete(connectionId, { previousSeq: lease.revision }).catch(() => {});
  }

  /** Gives every lease up and stops renewing (shutdown). */
  async releaseAll(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    await Promise.all([...this.#held.keys()].map((connectionId) => this.release(connectionId)));
  }

  /** Environments this node holds. */
  heldIds(): string[] {
    return [...this.#held.keys()];
  }

  #validFrom(sentAt: number): number {
    return sentAt + Math.floor((this.#options.ttlMs * 5) / 6);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#options.timers.setTimeout(
      () => {
        for (const [connectionId, lease] of this.#held) {
          if (this.held(connectionId)) void this.#renew(connectionId, lease);
        }
        this.#schedule();
      },
      Math.floor(this.#options.ttlMs / 3),
    );
    unrefTimer(this.#timer);
  }

  #renew(connectionId: string, lease: HeldLease): Promise<void> {
    lease.renewal ??= this.#renewOnce(connectionId, lease).finally(() => {
      lease.renewal = undefined;
    });
    return lease.renewal;
  }

  async #renewOnce(connectionId: string, lease: HeldLease): Promise<void> {
    const sentAt = this.#options.timers.now();
    try {
      lease.revision = await this.#options.kv.update(connectionId, encodeJson(lease.value), lease.revision);
      if (this.#held.get(connectionId) === lease) lease.validUntil = this.#validFrom(sentAt);
    } catch (error) {
      if (this.#held.get(connectionId) !== lease) return;
      if (isWrongRevision(error)) this.#lose(connectionId, "another node holds it, or it expired");
      else this.#options.logger.warn("relay: environment lease renewal failed; retrying", { connectionId, error: String(error) });
    }
  }

  #lose(connectionId: string, why: string): void {
    const lease = this.#held.get(connectionId);
    if (!lease) return;
    this.#held.delete(connectionId);
    // Still ours on the server (renewals failed, e.g. the store was unreachable)? Then give it up, so another node need not wait for it to expire.
    void this.#deleteKey(connectionId, lease);
    this.#options.logger.warn("relay: environment lease lost; this node lets the environment go", { connectionId, why });
    // Later, not inside the check that found it: the caller is in the middle of handling a frame.
    queueMicrotask(() => this.#options.onLost(connectionId));
  }
}
