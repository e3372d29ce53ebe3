/**
 * Opening a journal file: remove a compaction's leftover `.compact`, create the file (0600) if
 * missing, read it whole, replay its good lines, drop and count the bad ones, cut a truncated
 * last line, write a header into an empty file, and compact when it holds more than twice the
 * live lines + 1,000. Never rejects for the file's content; what it found is the
 * {@link FileJournalRecovery} report.
 *
 * A file that group or others may read or write is opened as it is (its mode is the user's
 * choice, and a compaction keeps it) and flagged in the report (`exposed`).
 */
import { constants } from "node:fs";
import { open, stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import type { JournalIndex } from "../calls/journal-index.js";
import { ToolrelayError } from "../errors.js";
import { compactedLines, headerLine, liveLines, replayJournal, syncFolder, writeCompactedJournal } from "./journal-compaction.js";
import type { JournalFileLock, JournalLockOwner } from "./journal-file-lock.js";
import { JOURNAL_FORMAT_VERSION, splitJournal } from "./journal-lines.js";

/** At most this many dropped lines are listed in a {@link FileJournalRecovery} (all are counted). */
export const MAX_LISTED_DROPPED_LINES = 20;

/** What opening a journal file found. */
export interface FileJournalRecovery {
  /** The journal file's absolute path. */
  readonly path: string;
  /** The file did not exist and was created. */
  readonly created: boolean;
  /** Records held after the replay (started + settled). */
  readonly records: number;
  readonly started: number;
  readonly settled: number;
  readonly tombstones: number;
  readonly aliases: number;
  /** The first {@link MAX_LISTED_DROPPED_LINES} dropped lines: 1-based line number and why (bad CRC, bad JSON, unknown kind, bad shape, truncated). */
  readonly dropped: ReadonlyArray<{ line: number; reason: string }>;
  /** How many lines were dropped, a truncated last line included. */
  readonly droppedCount: number;
  /** Bytes cut from the end of the file: a last line without its newline (a write cut short by a crash). */
  readonly truncatedBytes: number;
  /** Good lines that changed nothing (a settle of an unknown call, a second start of one, an alias of an unknown call). */
  readonly ignoredLines: number;
  /** The stale lock this open took over (its process is gone, or it was unreadable). */
  readonly staleLock: { owner: JournalLockOwner | undefined; reason: string } | undefined;
  /** A `<path>.compact` left by a compaction cut short was removed. */
  readonly removedCompactFile: boolean;
  /** The open compacted the file. */
  readonly compacted: boolean;
  /** The file's permission bits, in octal (`"600"`). */
  readonly fileMode: string;
  /** Group or others may read or write the file (left as it is: fix it with `chmod 600`). */
  readonly exposed: boolean;
}

/** The open file and what replaying it found, for the journal to take over. */
export interface OpenedJournalFile {
  readonly handle: Awaited<ReturnType<typeof open>>;
  /** The file's length (appends start there). */
  readonly size: number;
  readonly lineCount: number;
  /** Its permission bits (a compaction keeps them). */
  readonly mode: number;
  readonly recovery: FileJournalRecovery;
}

interface OpenRequest {
  path: string;
  index: JournalIndex;
  now: number;
  fsync: boolean;
  lockTakenOver: JournalFileLock["takenOver"];
}

/** Open, replay (into `request.index`) and repair the journal file `request.path`. */
export async function openJournalFile(request: OpenRequest): Promise<OpenedJournalFile> {
  const { path, index, now, fsync } = request;
  const removedCompactFile = await unlink(`${path}.compact`).then(
    () => true,
    (error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? false : Promise.reject(error)),
  );
  const created = await stat(path).then(
    () => false,
    (error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? true : Promise.reject(error)),
  );
  let handle = await open(path, constants.O_RDWR | constants.O_CREAT, 0o600);
  try {
    const mode = (await handle.stat()).mode & 0o777;
    const split = splitJournal(await handle.readFile());
    const replay = replayJournal(split, index);
    if (replay.headerVersion !== undefined && replay.headerVersion > JOURNAL_FORMAT_VERSION) {
      throw new ToolrelayError(
        "INVALID_OPTIONS",
        `journal file ${path} has format version ${replay.headerVersion}; this toolrelay reads version ${JOURNAL_FORMAT_VERSION} (upgrade toolrelay, or use another file)`,
        { details: { path, version: replay.headerVersion } },
      );
    }
    let size = split.keptBytes;
    let lineCount = split.lineCount;
    if (split.truncatedBytes > 0) {
      await handle.truncate(size);
      if (fsync) await handle.sync();
    }
    if (size === 0) {
      const header = Buffer.from(headerLine(now), "utf8");
      await handle.write(header, 0, header.length, 0);
      if (fsync) await handle.sync();
      size = header.length;
      lineCount = 1;
    }
    if (created && fsync) await syncFolder(dirname(path));
    index.evict(now);
    const compacted = lineCount > 2 * liveLines(index) + 1_000;
    if (compacted) {
      const lines = compactedLines(index, now);
      await writeCompactedJournal(path, lines, mode, fsync);
      await handle.close();
      handle = await open(path, constants.O_RDWR);
      size = (await handle.stat()).size;
      lineCount = lines.length;
    }
    const counts = index.counts();
    const recovery: FileJournalRecovery = {
      path,
      created,
      records: counts.started + counts.settled,
      started: counts.started,
      settled: counts.settled,
      tombstones: counts.tombstones,
      aliases: counts.aliases,
      dropped: split.dropped.slice(0, MAX_LISTED_DROPPED_LINES),
      droppedCount: split.dropped.length,
      truncatedBytes: split.truncatedBytes,
      ignoredLines: replay.ignoredLines,
      staleLock: request.lockTakenOver,
      removedCompactFile,
      compacted,
      fileMode: mode.toString(8),
      exposed: (mode & 0o077) !== 0,
    };
    return { handle, size, lineCount, mode, recovery };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}
