/**
 * The call journal in memory: today's behaviour (nothing outlives the process), bounded by a
 * {@link JournalRetention}. What sessions of one process share when they need no restart safety,
 * and what tests use. A thin wrapper over {@link JournalIndex}.
 */
import { ToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import type { ToolCallResponseBody } from "../wire/index.js";
import type { CallJournal, JournalEntry, JournalRetention } from "./call-journal.js";
import { JournalIndex, type JournalIndexCounts } from "./journal-index.js";

/** Options of {@link MemoryCallJournal}. */
export interface MemoryCallJournalOptions {
  /** How long and how much it keeps. Default: {@link DEFAULT_JOURNAL_RETENTION} (24 h records, 7 days tombstones, 100,000 records, 64 Mi response characters, 1,000,000 tombstones, no inputs). */
  retention?: JournalRetention | undefined;
  /** The clock of its retention. Default: the system timers. */
  timers?: Timers | undefined;
}

/** A {@link CallJournal} in this process's memory (`kind: "memory"`): every write is "durable" at once; `close()` only refuses later writes. */
export class MemoryCallJournal implements CallJournal {
  readonly kind = "memory";
  #index: JournalIndex;
  #timers: Timers;
  #closed = false;

  constructor(options: MemoryCallJournalOptions = {}) {
    this.#index = new JournalIndex(options.retention);
    this.#timers = options.timers ?? systemTimers;
  }

  find(key: string): JournalEntry | undefined {
    return this.#index.find(key, this.#timers.now());
  }

  start(entry: JournalEntry, input: unknown): Promise<JournalEntry | undefined> {
    if (this.#closed) return this.#refuse("start");
    return Promise.resolve(this.#index.start(entry, input, this.#timers.now()));
  }

  settle(key: string, response: ToolCallResponseBody, settledAt: number): Promise<void> {
    if (this.#closed) return this.#refuse("settle");
    this.#index.settle(key, response, settledAt, this.#timers.now());
    return Promise.resolve();
  }

  alias(alias: string, key: string): Promise<void> {
    if (this.#closed) return this.#refuse("alias");
    this.#index.alias(alias, key, this.#timers.now());
    return Promise.resolve();
  }

  /** How many records, tombstones and aliases it holds. */
  counts(): JournalIndexCounts {
    return this.#index.counts();
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  #refuse(operation: string): Promise<never> {
    return Promise.reject(new ToolrelayError("ABORTED", `memory journal: ${operation} after close()`));
  }
}
