/**
 * The file journal: a {@link CallJournal} in one append-only file, for one process that must not
 * run a call twice across its own restarts. Lines are `<crc32> <json>` (journal-lines.ts); writes
 * share `write` + `fsync` rounds (group-commit.ts); the file is replayed into a
 * {@link JournalIndex} at open, compacted when it holds more than twice the live lines + 1,000
 * (journal-compaction.ts), and locked to one process (journal-file-lock.ts).
 */
import { constants } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { CallJournal, JournalEntry, JournalRetention } from "../calls/index.js";
import { JournalIndex } from "../calls/journal-index.js";
import { ToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import type { ToolCallResponseBody } from "../wire/index.js";
import { openJournalFile, type FileJournalRecovery, type OpenedJournalFile } from "./file-journal-recovery.js";
import { GroupCommit } from "./group-commit.js";
import { compactedLines, liveLines, writeCompactedJournal } from "./journal-compaction.js";
import { acquireJournalLock, type JournalFileLock } from "./journal-file-lock.js";
import { encodeJournalLine, lineEntryOf, type JournalLine } from "./journal-lines.js";

/** Options of {@link openFileCallJournal}. */
export interface FileCallJournalOptions {
  /** The journal file (created, mode 0600, if missing; its folder too, mode 0700). Its lock is `<path>.lock`. */
  path: string;
  /** How long and how much it keeps. Default: {@link DEFAULT_JOURNAL_RETENTION} (24 h records, 7 days tombstones, 100,000 records, 64 Mi response characters, 1,000,000 tombstones, no inputs). */
  retention?: JournalRetention | undefined;
  /** fsync every write round and compaction. Default `true`; `false` only for tests and benchmarks (a crash of the machine may then lose writes). */
  fsync?: boolean | undefined;
  /** The clock of retention and of the lines' times. Default: the system timers. */
  timers?: Timers | undefined;
  /** Called once, before the open resolves, with what the open found (also on `journal.recovery`). A throw is ignored. */
  onRecovery?: ((report: FileJournalRecovery) => void) | undefined;
}

/**
 * Open (or create) the journal file `options.path`, replay it and lock it to this process.
 * Rejects with `INVALID_OPTIONS` when another live process holds it, when its format version is
 * newer than this code's, or when it cannot be created or read. A damaged line never makes it
 * reject: it is dropped and reported in `journal.recovery`.
 */
export async function openFileCallJournal(options: FileCallJournalOptions): Promise<FileCallJournal> {
  if (typeof options?.path !== "string" || options.path.length === 0) {
    throw new ToolrelayError("INVALID_OPTIONS", "openFileCallJournal: path must be a non-empty string");
  }
  const path = resolve(options.path);
  const timers = options.timers ?? systemTimers;
  const fsync = options.fsync ?? true;
  const index = new JournalIndex(options.retention);
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const lock = await acquireJournalLock(path, timers.now());
    let opened: OpenedJournalFile;
    try {
      opened = await openJournalFile({ path, index, now: timers.now(), fsync, lockTakenOver: lock.takenOver });
    } catch (error) {
      await lock.release();
      throw error;
    }
    try {
      options.onRecovery?.(opened.recovery);
    } catch {
      // The caller's callback: its throw must not undo an open that succeeded.
    }
    return new FileCallJournal(path, index, timers, fsync, lock, opened);
  } catch (error) {
    if (ToolrelayError.is(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolrelayError("INVALID_OPTIONS", `journal file ${path} cannot be opened: ${reason}`, { cause: error, details: { path } });
  }
}

/** The file journal (`kind: "file"`); open it with {@link openFileCallJournal}. */
export class FileCallJournal implements CallJournal {
  readonly kind = "file";
  /** The journal file's absolute path. */
  readonly path: string;
  /** What the open found: records, tombstones, dropped lines, a truncated tail, a stale lock. */
  readonly recovery: FileJournalRecovery;
  #index: JournalIndex;
  #timers: Timers;
  #fsync: boolean;
  #lock: JournalFileLock;
  #handle: OpenedJournalFile["handle"];
  #commit: GroupCommit;
  #lineCount: number;
  #mode: number;
  #compacting = false;
  #closed: Promise<void> | undefined;

  /** @internal Use {@link openFileCallJournal}. */
  constructor(path: string, index: JournalIndex, timers: Timers, fsync: boolean, lock: JournalFileLock, opened: OpenedJournalFile) {
    this.path = path;
    this.recovery = opened.recovery;
    this.#index = index;
    this.#timers = timers;
    this.#fsync = fsync;
    this.#lock = lock;
    this.#handle = opened.handle;
    this.#lineCount = opened.lineCount;
    this.#mode = opened.mode;
    this.#commit = new GroupCommit(opened.handle, opened.size, fsync);
  }

  find(key: string): JournalEntry | undefined {
    return this.#index.find(key, this.#timers.now());
  }

  async start(entry: JournalEntry, input: unknown): Promise<JournalEntry | undefined> {
    this.#refuseIfClosed("start");
    const now = this.#timers.now();
    const existing = this.#index.start(entry, input, now);
    if (existing !== undefined) {
      await this.#commit.idle();
      return existing;
    }
    const stored = this.#index.find(entry.key, now) ?? entry;
    try {
      await this.#append({ kind: "start", at: now, entry: lineEntryOf(stored, this.#index.retention.storeInputs) });
    } catch (error) {
      this.#index.forget(entry.key);
      throw error;
    }
    return undefined;
  }

  async settle(key: string, response: ToolCallResponseBody, settledAt: number): Promise<void> {
    this.#refuseIfClosed("settle");
    const now = this.#timers.now();
    if (this.#index.settle(key, response, settledAt, now) !== "settled") return;
    await this.#append({ kind: "settle", at: now, key, settledAt, response });
  }

  async alias(alias: string, key: string): Promise<void> {
    this.#refuseIfClosed("alias");
    const now = this.#timers.now();
    if (this.#index.alias(alias, key, now) !== "aliased") return;
    await this.#append({ kind: "alias", at: now, alias, key });
  }

  /** Write what is pending, close the file and remove the lock. Idempotent; never rejects. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#commit.idle();
      await this.#handle.close().catch(() => undefined);
      await this.#lock.release();
    })();
    return this.#closed;
  }

  /** How many records, tombstones and aliases it holds, and how many lines its file has. */
  counts(): ReturnType<JournalIndex["counts"]> & { fileLines: number } {
    return { ...this.#index.counts(), fileLines: this.#lineCount };
  }

  /** Rewrite the file with only what it holds now (what happens by itself when it grows past twice the live lines + 1,000). */
  async compact(): Promise<void> {
    this.#refuseIfClosed("compact");
    await this.#commit.exclusive(async () => {
      const lines = compactedLines(this.#index, this.#timers.now());
      await writeCompactedJournal(this.path, lines, this.#mode, this.#fsync);
      const handle = await open(this.path, constants.O_RDWR);
      const size = (await handle.stat()).size;
      await this.#handle.close().catch(() => undefined);
      this.#handle = handle;
      this.#lineCount = lines.length;
      return { file: handle, size };
    });
  }

  async #append(line: JournalLine): Promise<void> {
    const encoded = encodeJournalLine(line);
    if (!encoded.ok)
      throw new ToolrelayError("INTERNAL", `file journal ${this.path}: cannot encode a ${line.kind} line: ${encoded.reason}`);
    this.#lineCount++;
    const written = this.#commit.append(encoded.text);
    this.#maybeCompact();
    try {
      await written;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new ToolrelayError(
        "JOURNAL_FAILED",
        `file journal ${this.path}: write failed (${error instanceof Error ? error.message : String(error)})`,
        {
          cause: error,
          details: { path: this.path, code },
        },
      );
    }
  }

  #maybeCompact(): void {
    if (this.#compacting || this.#lineCount <= 2 * liveLines(this.#index) + 1_000) return;
    this.#compacting = true;
    // A failed compaction leaves the old file in use; the next write tries again.
    this.compact()
      .catch(() => undefined)
      .finally(() => {
        this.#compacting = false;
      });
  }

  #refuseIfClosed(operation: string): void {
    if (this.#closed !== undefined)
      throw new ToolrelayError("ABORTED", `file journal ${this.path}: ${operation} after close()`, { details: { path: this.path } });
  }
}
