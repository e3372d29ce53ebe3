/**
 * Environments nobody holds (docs/relay-cluster.md "Environments nobody holds"): an environment's
 * grace timer runs on its holder, so when the holder dies and the listener never comes back, no
 * node would ever remove it — its records would stay, and count against the tenant's environment
 * cap, for good. Every node sweeps now and then: an environment with a record but no lease and no
 * node serving it is taken over, which starts its grace timer on the taker; if its listener stays
 * away, it is removed as on one relay. Only one node gets the lease, so sweeps on several nodes at
 * once take each environment over once.
 */
import { unrefTimer, type TimerHandle, type Timers } from "toolrelay/protocol";
import type { RelayLogger } from "../relay-options.js";

/** The longest pause between two sweeps of a node. */
export const MAX_ORPHAN_SWEEP_INTERVAL_MS = 60_000;

/**
 * How often a node sweeps: a quarter of the environment grace time, at least twice the lease TTL
 * (a dead holder's lease must run out first), at most {@link MAX_ORPHAN_SWEEP_INTERVAL_MS}.
 */
export function orphanSweepIntervalMs(environmentGraceMs: number, leaseTtlMs: number): number {
  return Math.max(leaseTtlMs * 2, Math.min(environmentGraceMs / 4, MAX_ORPHAN_SWEEP_INTERVAL_MS));
}

export interface OrphanSweepOptions {
  intervalMs: number;
  timers: Timers;
  logger: RelayLogger;
  /** Every environment the shared directory has a record of. */
  recorded(): Promise<string[]>;
  /** Every environment some node holds a lease on. */
  leased(): Promise<string[]>;
  /** Takes `connectionId` over if it is still free; `true` when this node did. */
  takeOver(connectionId: string): Promise<boolean>;
}

export class OrphanSweep {
  #options: OrphanSweepOptions;
  #timer: TimerHandle | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(options: OrphanSweepOptions) {
    this.#options = options;
  }

  start(): void {
    this.#schedule();
  }

  /** Stops sweeping; resolves once a sweep under way ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One sweep now: the environments this node took over. */
  async sweep(): Promise<string[]> {
    const [recorded, leased] = await Promise.all([this.#options.recorded(), this.#options.leased()]);
    const held = new Set(leased);
    const taken: string[] = [];
    for (const connectionId of recorded) {
      if (this.#stopped) break;
      if (held.has(connectionId)) continue;
      if (await this.#options.takeOver(connectionId)) taken.push(connectionId);
    }
    if (taken.length > 0) {
      this.#options.logger.info("relay: environments nobody held were taken over (their grace time runs here)", { count: taken.length });
    }
    return taken;
  }

  #schedule(): void {
    if (this.#stopped) return;
    // Nodes started together would sweep together: each waits between half and the whole interval.
    const delay = this.#options.intervalMs * (0.5 + Math.random() / 2);
    this.#timer = this.#options.timers.setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.sweep()
        .then(
          () => undefined,
          (error: unknown) => this.#options.logger.warn("relay: sweeping for environments nobody holds failed", { error: String(error) }),
        )
        .finally(() => {
          this.#running = undefined;
          this.#schedule();
        });
    }, delay);
    unrefTimer(this.#timer);
  }
}
