/**
 * Replay and compaction of a journal file. Replay applies the good lines of a file to a
 * {@link JournalIndex}, each at its own `at` (so retention measures from the original writes).
 * Compaction rewrites the file with only what the index holds: a header, then every tombstone,
 * then every record (its `start` line, and its `settle` line once settled), then every alias, each
 * stamped with its record's last write. Crash-safe: the new file is written to `<path>.compact`,
 * fsynced, renamed over `<path>`, and the folder fsynced; a crash before the rename leaves the old
 * file whole (and a `.compact` that the next open removes), a crash after it leaves the new one.
 */
import { open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import type { JournalIndex } from "../calls/journal-index.js";
import {
  JOURNAL_FORMAT,
  JOURNAL_FORMAT_VERSION,
  encodeJournalLine,
  entryOfLine,
  lineEntryOf,
  type JournalLine,
  type SplitJournal,
} from "./journal-lines.js";

/** What a replay did: the header's version (if any) and the good lines it ignored (a settle of an unknown call, a second start). */
export interface ReplayResult {
  readonly headerVersion: number | undefined;
  readonly ignoredLines: number;
}

/** Apply `split`'s good lines to `index`, each at its own time. */
export function replayJournal(split: SplitJournal, index: JournalIndex): ReplayResult {
  let headerVersion: number | undefined;
  let ignoredLines = 0;
  for (const { number, line } of split.lines) {
    if (line.kind === "header") {
      if (number === 1) headerVersion = line.version;
      else ignoredLines++;
      continue;
    }
    if (!applyLine(line, index)) ignoredLines++;
  }
  return { headerVersion, ignoredLines };
}

function applyLine(line: Exclude<JournalLine, { kind: "header" }>, index: JournalIndex): boolean {
  switch (line.kind) {
    case "start": {
      const { input, ...entry } = line.entry;
      return index.start(entryOfLine(entry, "started"), input, line.at) === undefined;
    }
    case "settle":
      return index.settle(line.key, line.response, line.settledAt, line.at) === "settled";
    case "alias":
      return index.alias(line.alias, line.key, line.at) === "aliased";
    case "tombstone":
      return index.restoreTombstone(entryOfLine(line.entry, "expired"), line.at, line.at);
  }
}

/** The header line of a new journal file. */
export function headerLine(now: number): string {
  const encoded = encodeJournalLine({ kind: "header", format: JOURNAL_FORMAT, version: JOURNAL_FORMAT_VERSION, createdAt: now });
  if (!encoded.ok) throw new Error(encoded.reason);
  return encoded.text;
}

/** The lines of a compacted file holding what `index` holds at `now` (a header first). */
export function compactedLines(index: JournalIndex, now: number): string[] {
  const storeInputs = index.retention.storeInputs;
  const lines = [headerLine(now)];
  const aliases: string[] = [];
  const push = (line: JournalLine) => {
    const encoded = encodeJournalLine(line);
    if (encoded.ok) lines.push(encoded.text);
  };
  for (const { entry, writtenAt: at, aliases: names } of index.entries(now)) {
    if (entry.state === "expired") push({ kind: "tombstone", at, entry: lineEntryOf(entry, false) });
    else {
      const { settledAt: _settledAt, ...started } = entry;
      push({ kind: "start", at, entry: lineEntryOf(started, storeInputs) });
      if (entry.state === "settled" && entry.response !== undefined) {
        push({ kind: "settle", at, key: entry.key, settledAt: entry.settledAt ?? at, response: entry.response });
      }
    }
    for (const alias of names) {
      const encoded = encodeJournalLine({ kind: "alias", at, alias, key: entry.key });
      if (encoded.ok) aliases.push(encoded.text);
    }
  }
  return lines.concat(aliases);
}

/** Write `lines` to `<path>.compact` (mode `mode`), fsync it, rename it over `path`, fsync the folder. */
export async function writeCompactedJournal(path: string, lines: readonly string[], mode: number, fsync: boolean): Promise<void> {
  const compactPath = `${path}.compact`;
  const handle = await open(compactPath, "w", mode);
  try {
    await handle.chmod(mode);
    const chunk: string[] = [];
    let chars = 0;
    for (const line of lines) {
      chunk.push(line);
      chars += line.length;
      if (chars >= 1 << 20) {
        await handle.writeFile(chunk.splice(0).join(""));
        chars = 0;
      }
    }
    if (chunk.length > 0) await handle.writeFile(chunk.join(""));
    if (fsync) await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(compactPath, path);
  if (fsync) await syncFolder(dirname(path));
}

/** fsync a folder, so a file created or renamed in it stays after a crash (a no-op where folders cannot be opened). */
export async function syncFolder(folder: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(folder, "r");
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL") throw error;
  } finally {
    await handle?.close();
  }
}

/** The lines a compacted file of `index` would hold (its header included). */
export function liveLines(index: JournalIndex): number {
  const counts = index.counts();
  return 1 + counts.started + 2 * counts.settled + counts.tombstones + counts.aliases;
}
