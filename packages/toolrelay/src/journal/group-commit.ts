/**
 * Group commit: every line appended in the same tick, or while a write and fsync are running,
 * shares the next single `write` + `fsync`; each `append` resolves once its bytes are durable (or
 * rejects, with every append of its batch, when the write or the fsync fails). Lines are written
 * in append order, at explicit positions from the last durable end: after a failed batch the
 * next one first cuts the file back there, so a half-written batch never sits before good lines.
 *
 * An exclusive task (the compaction) runs between batches: nothing is written while it runs, and
 * it may swap the file the next batches go to.
 */

/** The file a {@link GroupCommit} writes to (a `FileHandle` fits). */
export interface CommitFile {
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
}

interface Waiter {
  bytes: Uint8Array;
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface Exclusive {
  task: () => Promise<{ file: CommitFile; size: number } | undefined>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Batches appends to one file into shared write + fsync rounds. */
export class GroupCommit {
  #file: CommitFile;
  #size: number;
  #fsync: boolean;
  #pending: Waiter[] = [];
  #exclusive: Exclusive[] = [];
  #running = false;
  #dirtyTail = false;
  #idle: Array<() => void> = [];

  /**
   * @param file where the lines go
   * @param size the file's durable length (appends start there)
   * @param fsync whether each round ends with an fsync (`true` but in tests and benchmarks)
   */
  constructor(file: CommitFile, size: number, fsync: boolean) {
    this.#file = file;
    this.#size = size;
    this.#fsync = fsync;
  }

  /** The file's durable length. */
  get size(): number {
    return this.#size;
  }

  /** Append `text` (whole lines); resolves once it is written (and fsynced). */
  append(text: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ bytes: Buffer.from(text, "utf8"), resolve, reject });
      this.#schedule();
    });
  }

  /** Run `task` between two rounds; it may return the file (and its durable length) later rounds write to. */
  exclusive(task: Exclusive["task"]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#exclusive.push({ task, resolve, reject });
      this.#schedule();
    });
  }

  /** Resolves once everything appended so far was attempted (never rejects). */
  idle(): Promise<void> {
    if (!this.#running && this.#pending.length === 0 && this.#exclusive.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #schedule(): void {
    if (this.#running) return;
    this.#running = true;
    queueMicrotask(() => void this.#run());
  }

  async #run(): Promise<void> {
    while (this.#exclusive.length > 0 || this.#pending.length > 0) {
      const exclusive = this.#exclusive.shift();
      if (exclusive !== undefined) {
        await this.#runExclusive(exclusive);
        continue;
      }
      const batch = this.#pending.splice(0);
      try {
        await this.#writeRound(batch);
        for (const waiter of batch) waiter.resolve();
      } catch (error) {
        this.#dirtyTail = true;
        for (const waiter of batch) waiter.reject(error);
      }
    }
    this.#running = false;
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  async #runExclusive(exclusive: Exclusive): Promise<void> {
    try {
      const swapped = await exclusive.task();
      if (swapped !== undefined) {
        this.#file = swapped.file;
        this.#size = swapped.size;
        this.#dirtyTail = false;
      }
      exclusive.resolve();
    } catch (error) {
      exclusive.reject(error);
    }
  }

  async #writeRound(batch: Waiter[]): Promise<void> {
    if (this.#dirtyTail) {
      await this.#file.truncate(this.#size);
      this.#dirtyTail = false;
    }
    const bytes = batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((waiter) => waiter.bytes));
    let written = 0;
    while (written < bytes.length) {
      const { bytesWritten } = await this.#file.write(bytes, written, bytes.length - written, this.#size + written);
      if (bytesWritten <= 0) throw new Error(`write returned ${bytesWritten} bytes`);
      written += bytesWritten;
    }
    if (this.#fsync) await this.#file.sync();
    this.#size += bytes.length;
  }
}
