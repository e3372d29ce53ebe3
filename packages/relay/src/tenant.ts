/**
 * A tenant of the relay: the owner of environments, SDK sessions and outstanding tool calls,
 * with a cap on each (its resource registry) and one budget for the unacknowledged bytes its
 * sessions hold. Everything a tenant creates is counted here, so a cap is one check in one place.
 *
 * SDK-managed sandboxes are one more resource kind of the same registry: a sandbox is created by
 * a tenant, its listener registers with a key the relay minted for it under that tenant, and its
 * environment is then owned by the tenant like any other (docs/relay.md "Sandboxes").
 */
import type { RelayLogger } from "./relay-options.js";

/** What a tenant owns and the relay caps. */
export type TenantResource = "environment" | "session" | "outstandingCall" | "sandbox";

/** A holder of unacknowledged bytes (an SDK session). */
export interface UnackedHolder {
  readonly unackedBytes: number;
  /** The tenant's budget is exceeded and this holder has the most: it must give everything up (close). */
  overTenantBudget(): void;
}

/** Counters of one tenant, for `relay.stats()` and the `/_relay/stats` test hook. */
export interface TenantUsage {
  tenant: string;
  environments: number;
  sessions: number;
  outstandingCalls: number;
  sandboxes: number;
  unackedBytes: number;
}

/**
 * Cluster mode: what the tenant holds on the OTHER nodes (docs/relay-cluster.md "Tenant caps"),
 * added to this node's own counts in every cap check.
 */
export interface TenantRemoteUsage {
  /** Units of `kind` (or unacknowledged bytes) the tenant holds on the other nodes now. */
  held(tenant: string, kind: TenantResource | "unackedBytes"): number;
}

/** What this node alone holds for a tenant (what cluster mode publishes for the other nodes). */
export type TenantLocalUsage = Record<TenantResource | "unackedBytes", number>;

export interface TenantLimits {
  environment: number;
  session: number;
  outstandingCall: number;
  sandbox: number;
  unackedBytes: number;
}

export class Tenant {
  readonly name: string;
  #limits: TenantLimits;
  #logger: RelayLogger;
  #used: Record<TenantResource, number> = { environment: 0, session: 0, outstandingCall: 0, sandbox: 0 };
  #holders = new Map<UnackedHolder, number>();
  #unackedBytes = 0;
  #remote: TenantRemoteUsage | undefined;
  #onChange: (() => void) | undefined;

  constructor(name: string, limits: TenantLimits, logger: RelayLogger) {
    this.name = name;
    this.#limits = limits;
    this.#logger = logger;
  }

  /** The cap of `kind`. */
  limit(kind: TenantResource): number {
    return this.#limits[kind];
  }

  /**
   * Cluster mode: count what the other nodes hold too (`remote`), and say when this node's own
   * counts change (`onChange`, to publish them).
   */
  joinCluster(remote: TenantRemoteUsage, onChange: () => void): void {
    this.#remote = remote;
    this.#onChange = onChange;
  }

  /** Takes one unit of `kind`; false (and nothing taken) when the tenant is at its cap (in cluster mode: across every node). */
  reserve(kind: TenantResource): boolean {
    if (this.used(kind) >= this.#limits[kind]) {
      this.#logger.warn("relay: tenant limit reached", { tenant: this.name, resource: kind, limit: this.#limits[kind] });
      return false;
    }
    this.#used[kind]++;
    this.#onChange?.();
    return true;
  }

  /**
   * Takes one unit of `kind` without the cap check: cluster mode, for what the tenant already
   * holds in the cluster and this node takes over (an environment, its outstanding calls).
   */
  take(kind: TenantResource): void {
    this.#used[kind]++;
    this.#onChange?.();
  }

  /** Gives back `units` of `kind` (never below zero). */
  release(kind: TenantResource, units = 1): void {
    this.#used[kind] = Math.max(0, this.#used[kind] - units);
    this.#onChange?.();
  }

  /** How many of `kind` the tenant holds (in cluster mode: on every node). */
  used(kind: TenantResource): number {
    return this.#used[kind] + (this.#remote?.held(this.name, kind) ?? 0);
  }

  /** What this node alone holds. */
  localUsage(): TenantLocalUsage {
    return { ...this.#used, unackedBytes: this.#unackedBytes };
  }

  /**
   * A holder's unacknowledged bytes changed to `bytes`. Past the tenant's budget, the holder
   * with the most bytes is told to give them up (it closes, and reports 0).
   */
  setUnacked(holder: UnackedHolder, bytes: number): void {
    const previous = this.#holders.get(holder) ?? 0;
    if (bytes <= 0) this.#holders.delete(holder);
    else this.#holders.set(holder, bytes);
    this.#unackedBytes += bytes - previous;
    if (bytes !== previous) this.#onChange?.();
    if (this.#unackedBytes + (this.#remote?.held(this.name, "unackedBytes") ?? 0) <= this.#limits.unackedBytes) return;
    let largest: UnackedHolder | undefined;
    let most = -1;
    for (const [candidate, held] of this.#holders) {
      if (held > most) {
        most = held;
        largest = candidate;
      }
    }
    if (!largest) return;
    this.#logger.warn("relay: tenant unacknowledged-bytes budget exceeded; closing its largest session", {
      tenant: this.name,
      limit: this.#limits.unackedBytes,
      held: most,
    });
    largest.overTenantBudget();
  }

  /** The tenant's counts (in cluster mode: on every node). */
  usage(): TenantUsage {
    return {
      tenant: this.name,
      environments: this.used("environment"),
      sessions: this.used("session"),
      outstandingCalls: this.used("outstandingCall"),
      sandboxes: this.used("sandbox"),
      unackedBytes: this.#unackedBytes + (this.#remote?.held(this.name, "unackedBytes") ?? 0),
    };
  }
}
