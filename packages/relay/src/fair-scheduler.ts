/**
 * Runs the relay's frame processing in slices, round-robin: first across tenants, then across
 * each tenant's connections. Every turn gives each tenant with work one slice of one of its
 * connections, so a tenant flooding frames (or sending 16 MiB ones) gets its share of the event
 * loop and no more; between turns the event loop reads other sockets. See docs/relay.md "Fairness".
 */

import { turnWrites } from "./turn-write-batch.js";

/** Something with frames waiting: one socket's inbound queue. */
export interface SliceSource {
  /** Does up to `budget` units of work (≈ bytes looked at); returns true while work is left. */
  runSlice(budget: number): boolean;
}

/** Work units per slice: a few small frames, or a 256 KiB stretch of a large frame's strings. */
export const SLICE_BUDGET = 16 * 1024;

export type Defer = (callback: () => void) => void;

/** What brackets a turn: the writes it makes leave together when it ends (turn-write-batch.ts). */
export interface TurnBrackets {
  begin(): void;
  end(): void;
}

export class FairScheduler {
  #groups = new Map<string, SliceSource[]>();
  #queued = new Set<SliceSource>();
  #scheduled = false;
  #defer: Defer;
  #budget: number;
  #onError: (error: unknown) => void;
  #brackets: TurnBrackets;

  /** `defer` runs a callback after pending I/O (default `setImmediate`); `brackets` default: the relay's turn write batch. */
  constructor(
    options: {
      defer?: Defer | undefined;
      budget?: number | undefined;
      onError?: ((error: unknown) => void) | undefined;
      brackets?: TurnBrackets | undefined;
    } = {},
  ) {
    // biome-ignore lint/style/noRestrictedGlobals: a slice waits for pending I/O (one event-loop turn), not for time
    this.#defer = options.defer ?? ((callback) => void setImmediate(callback));
    this.#budget = options.budget ?? SLICE_BUDGET;
    this.#onError = options.onError ?? (() => {});
    this.#brackets = options.brackets ?? turnWrites;
  }

  /** `source` (of tenant `group`) has work: it gets a slice in the next turns until it says it is done. */
  wake(group: string, source: SliceSource): void {
    if (this.#queued.has(source)) return;
    this.#queued.add(source);
    let sources = this.#groups.get(group);
    if (!sources) {
      sources = [];
      this.#groups.set(group, sources);
    }
    sources.push(source);
    this.#schedule();
  }

  /** Sources waiting for a slice (for tests and stats). */
  get pending(): number {
    return this.#queued.size;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#defer(() => {
      this.#scheduled = false;
      this.#turn();
    });
  }

  /** One turn: one slice for the next source of every tenant with work. */
  #turn(): void {
    this.#brackets.begin();
    try {
      this.#slices();
    } finally {
      this.#brackets.end();
    }
    if (this.#groups.size > 0) this.#schedule();
  }

  #slices(): void {
    for (const [group, sources] of [...this.#groups]) {
      const source = sources.shift();
      if (!source) {
        this.#groups.delete(group);
        continue;
      }
      let more = false;
      try {
        more = source.runSlice(this.#budget);
      } catch (error) {
        this.#onError(error);
      }
      if (more) sources.push(source);
      else this.#queued.delete(source);
      if (sources.length === 0) this.#groups.delete(group);
    }
  }
}
