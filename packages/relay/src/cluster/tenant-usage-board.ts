/**
 * Tenant caps across the cluster (docs/relay-cluster.md "Tenant caps"): every node publishes what
 * each tenant holds on it — environments, SDK sessions, outstanding calls, unacknowledged bytes —
 * to the `<name>_usage` bucket (one key per tenant and node), at once when it changes and again
 * every third of the entry's life, and watches the others' entries. A cap check adds the other
 * nodes' counts to this node's own. An entry not refreshed within its life (its node died) stops
 * counting — judged by when this node last received it, so clocks need not agree.
 *
 * Checks read what has arrived: two nodes that take the last unit at the same instant can both
 * pass. A tenant's counts are published at once when they change after a quiet spell, then at most
 * every {@link PUBLISH_INTERVAL_MS} while they keep changing; so the overshoot is bounded by the
 * requests that arrive within one interval plus a publish round trip.
 */
import type { KV, KvWatchEntry } from "@nats-io/kv";
import { unrefTimer, type TimerHandle, type Timers } from "toolrelay/protocol";
import type { RelayLogger } from "../relay-options.js";
import type { Tenant, TenantLocalUsage, TenantRemoteUsage, TenantResource } from "../tenant.js";
import { decodeJson, encodeJson, keyToken } from "./cluster-store.js";

interface RemoteEntry {
  node: string;
  tenant: string;
  usage: TenantLocalUsage;
  receivedAt: number;
}

export interface TenantUsageBoardOptions {
  kv: KV;
  nodeId: string;
  tenants: readonly Tenant[];
  /** How long an entry counts after it was last received; a node refreshes its own every third of it. */
  lifeMs: number;
  timers: Timers;
  logger: RelayLogger;
}

/** The least time between two publishes of one tenant's counts while they keep changing (ms). */
export const PUBLISH_INTERVAL_MS = 25;

const KINDS: ReadonlyArray<keyof TenantLocalUsage> = ["environment", "session", "outstandingCall", "sandbox", "unackedBytes"];

function parseUsage(value: unknown): { node: string; tenant: string; usage: TenantLocalUsage } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.node !== "string" || typeof record.tenant !== "string") return undefined;
  const usage = {} as TenantLocalUsage;
  for (const kind of KINDS) usage[kind] = Math.max(0, Number(record[kind]) || 0);
  return { node: record.node, tenant: record.tenant, usage };
}

export class TenantUsageBoard implements TenantRemoteUsage {
  #options: TenantUsageBoardOptions;
  /** key → the other nodes' entries. */
  #remote = new Map<string, RemoteEntry>();
  #publishing = new Map<string, Promise<void>>();
  #dirty = new Set<Tenant>();
  #refreshTimer: TimerHandle | undefined;
  #stopped = false;
  #watch: { stop(): void } | undefined;

  constructor(options: TenantUsageBoardOptions) {
    this.#options = options;
  }

  /** Loads the other nodes' entries, starts watching and publishing; every tenant counts the cluster from now on. */
  async start(): Promise<void> {
    const watcher = await this.#options.kv.watch({ key: ">" });
    this.#watch = watcher;
    void (async () => {
      for await (const entry of watcher) this.#received(entry);
    })().catch((error: unknown) => {
      if (!this.#stopped) this.#options.logger.warn("relay: tenant usage watch ended", { error: String(error) });
    });
    for (const tenant of this.#options.tenants) {
      tenant.joinCluster(this, () => this.#changed(tenant));
      this.#changed(tenant);
    }
    this.#scheduleRefresh();
  }

  held(tenant: string, kind: TenantResource | "unackedBytes"): number {
    const cutoff = this.#options.timers.now() - this.#options.lifeMs;
    let total = 0;
    for (const entry of this.#remote.values()) {
      if (entry.tenant === tenant && entry.receivedAt >= cutoff) total += entry.usage[kind];
    }
    return total;
  }

  /** Stops publishing and removes this node's entries (its tenants then count nothing here). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#refreshTimer !== undefined) this.#options.timers.clearTimeout(this.#refreshTimer);
    this.#watch?.stop();
    await Promise.all([...this.#publishing.values()]);
    await Promise.all(this.#options.tenants.map((tenant) => this.#options.kv.delete(this.#keyOf(tenant.name)).catch(() => {})));
  }

  #keyOf(tenant: string): string {
    return `${keyToken(tenant)}.${this.#options.nodeId}`;
  }

  #received(entry: KvWatchEntry): void {
    if (entry.key.endsWith(`.${this.#options.nodeId}`)) return;
    if (entry.operation !== "PUT") {
      this.#remote.delete(entry.key);
      return;
    }
    const parsed = parseUsage(decodeJson(entry.value));
    if (!parsed || parsed.node === this.#options.nodeId) return;
    this.#remote.set(entry.key, { ...parsed, receivedAt: this.#options.timers.now() });
  }

  /** A tenant's counts changed here: publish them (one write in flight per tenant; a change meanwhile is written after it). */
  #changed(tenant: Tenant): void {
    if (this.#stopped) return;
    this.#dirty.add(tenant);
    if (this.#publishing.has(tenant.name)) return;
    const publish = (async () => {
      while (this.#dirty.delete(tenant) && !this.#stopped) {
        const usage = tenant.localUsage();
        await this.#options.kv
          .put(this.#keyOf(tenant.name), encodeJson({ node: this.#options.nodeId, tenant: tenant.name, ...usage }))
          .catch((error: unknown) => this.#options.logger.warn("relay: publishing tenant usage failed", { error: String(error) }));
        // Under traffic the counts change with every call: publish at most once per interval (what changed meanwhile goes in the next).
        if (this.#dirty.has(tenant) && !this.#stopped)
          await new Promise((resolve) => this.#options.timers.setTimeout(() => resolve(undefined), PUBLISH_INTERVAL_MS));
      }
    })().finally(() => this.#publishing.delete(tenant.name));
    this.#publishing.set(tenant.name, publish);
  }

  #scheduleRefresh(): void {
    if (this.#stopped) return;
    this.#refreshTimer = this.#options.timers.setTimeout(
      () => {
        for (const tenant of this.#options.tenants) this.#changed(tenant);
        this.#scheduleRefresh();
      },
      Math.floor(this.#options.lifeMs / 3),
    );
    unrefTimer(this.#refreshTimer);
  }
}
