/**
 * One process per journal file: `<path>.lock` holds `{ pid, hostname, startedAt, nonce }`. It is
 * written whole to a temporary file and hard-linked into place (`link` fails when the lock
 * exists, so no reader ever sees a half-written lock). A lock that names a live process on this
 * host (`process.kill(pid, 0)`), or any process on another host (its liveness cannot be checked),
 * refuses the open; a lock naming a dead process, or unreadable, is stale and taken over.
 *
 * Left alone: two processes taking over the same stale lock in the same instant may both
 * succeed (the window is one `unlink` + `link`); a journal on a shared network folder opened from
 * two hosts is refused only while both write their hostnames correctly.
 */
import { randomUUID } from "node:crypto";
import { link, open, readFile, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { ToolrelayError } from "../errors.js";

/** What a lock file says. */
export interface JournalLockOwner {
  readonly pid: number;
  readonly hostname: string;
  /** When the owner took the lock (epoch ms). */
  readonly startedAt: number;
}

/** A held lock. */
export interface JournalFileLock {
  /** The lock file's path. */
  readonly path: string;
  /** The stale lock this one replaced, if any (`undefined` owner fields when it was unreadable). */
  readonly takenOver: { owner: JournalLockOwner | undefined; reason: string } | undefined;
  /** Remove the lock file if it is still this one. Idempotent; never rejects. */
  release(): Promise<void>;
}

/** Take the lock of the journal file `journalPath`; rejects with `JOURNAL_LOCKED` (naming the file and the owner) when a live process holds it. */
export async function acquireJournalLock(journalPath: string, now: number): Promise<JournalFileLock> {
  const lockPath = `${journalPath}.lock`;
  const nonce = randomUUID();
  const content = `${JSON.stringify({ pid: process.pid, hostname: hostname(), startedAt: now, nonce })}\n`;
  const temporary = `${lockPath}.${process.pid}.${nonce}.tmp`;
  const handle = await open(temporary, "wx", 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  let takenOver: JournalFileLock["takenOver"];
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(temporary, lockPath);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 3) throw error;
      }
      const held = await readOwner(lockPath);
      if (held === "gone") continue;
      const verdict = staleness(held);
      if (verdict.live) {
        const owner = held as JournalLockOwner;
        throw new ToolrelayError(
          "JOURNAL_LOCKED",
          `journal file ${journalPath} is in use by process ${owner.pid} on ${owner.hostname} (lock ${lockPath}); one process per journal file`,
          {
            details: { path: journalPath, lockPath, pid: owner.pid, hostname: owner.hostname },
          },
        );
      }
      takenOver = { owner: held === "unreadable" ? undefined : held, reason: verdict.reason };
      await unlink(lockPath).catch(ignoreMissing);
    }
  } finally {
    await unlink(temporary).catch(ignoreMissing);
  }
  let released: Promise<void> | undefined;
  return {
    path: lockPath,
    takenOver,
    release: () => {
      released ??= releaseIfOurs(lockPath, nonce);
      return released;
    },
  };
}

async function releaseIfOurs(lockPath: string, nonce: string): Promise<void> {
  try {
    const text = await readFile(lockPath, "utf8");
    if ((JSON.parse(text) as { nonce?: unknown }).nonce === nonce) await unlink(lockPath);
  } catch {
    // Gone already, or replaced by an unreadable one: not ours to remove.
  }
}

async function readOwner(lockPath: string): Promise<JournalLockOwner | "unreadable" | "gone"> {
  let text: string;
  try {
    text = await readFile(lockPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw error;
  }
  try {
    const value = JSON.parse(text) as Partial<JournalLockOwner>;
    if (
      Number.isSafeInteger(value.pid) &&
      (value.pid ?? 0) > 0 &&
      typeof value.hostname === "string" &&
      typeof value.startedAt === "number"
    ) {
      return { pid: value.pid as number, hostname: value.hostname, startedAt: value.startedAt };
    }
  } catch {
    // Falls through: not a lock this code wrote.
  }
  return "unreadable";
}

function staleness(owner: JournalLockOwner | "unreadable"): { live: boolean; reason: string } {
  if (owner === "unreadable") return { live: false, reason: "the lock file was unreadable" };
  if (owner.hostname !== hostname()) return { live: true, reason: "held on another host" };
  try {
    process.kill(owner.pid, 0);
    return { live: true, reason: "its process is alive" };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EPERM") return { live: true, reason: "its process is alive (another user)" };
    return { live: false, reason: `process ${owner.pid} is gone` };
  }
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}
