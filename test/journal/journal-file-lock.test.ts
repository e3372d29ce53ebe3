/**
 * One process per journal file, with real processes: a second process that opens a held journal
 * is refused (the error names the file and the holder's pid); once the holder is killed with
 * SIGKILL its lock is stale and the next open takes it over (and says so in its report). A lock
 * from another host is refused; an unreadable one is taken over; close removes only its own lock.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openFileCallJournal } from "../../packages/toolrelay/src/journal/index.js";

const folder = mkdtempSync(join(tmpdir(), "journal-lock-"));
const children: Array<{ kill(signal: NodeJS.Signals): boolean }> = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(folder, { recursive: true, force: true });
});
const journalIndex = new URL("../../packages/toolrelay/src/journal/index.ts", import.meta.url).pathname;

/** A Node process that opens the journal `path`, prints `ready <pid>` or `refused <code> <message>`, and, if it opened it, holds it until killed. */
function opener(path: string) {
  const source = `
    const { openFileCallJournal } = await import(${JSON.stringify(journalIndex)});
    try {
      await openFileCallJournal({ path: ${JSON.stringify(path)} });
      process.stdout.write("ready " + process.pid + "\\n");
      setInterval(() => undefined, 1_000);
    } catch (error) {
      process.stdout.write("refused " + error.code + " " + error.message + "\\n");
    }`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", source], {
    cwd: process.cwd(),
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  let output = "";
  const line = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("\n")) resolve(output.trim());
    });
    child.on("exit", (code) => reject(new Error(`opener exited (${String(code)}) before a line`)));
  });
  return { child, line, exited: new Promise<void>((resolve) => child.on("exit", () => resolve())) };
}

describe("journal file lock: one process per file", () => {
  it("a second process is refused while this one holds the journal, naming the file and the pid", async () => {
    const path = join(folder, "held-here.journal");
    const journal = await openFileCallJournal({ path });
    const second = opener(path);
    expect(await second.line).toBe(
      `refused JOURNAL_LOCKED journal file ${path} is in use by process ${process.pid} on ${hostname()} (lock ${path}.lock); one process per journal file`,
    );
    await second.exited;
    await expect(openFileCallJournal({ path })).rejects.toMatchObject({ code: "JOURNAL_LOCKED", details: { pid: process.pid, path } });
    await journal.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it("refused while another process holds it; after kill -9 of that process the stale lock is taken over and reported", async () => {
    const path = join(folder, "held-there.journal");
    const holder = opener(path);
    const ready = await holder.line;
    expect(ready).toBe(`ready ${holder.child.pid}`);
    await expect(openFileCallJournal({ path })).rejects.toMatchObject({
      code: "JOURNAL_LOCKED",
      message: expect.stringContaining(`in use by process ${holder.child.pid}`),
    });
    holder.child.kill("SIGKILL");
    await holder.exited;
    const journal = await openFileCallJournal({ path });
    expect(journal.recovery.staleLock).toEqual({
      owner: { pid: holder.child.pid, hostname: hostname(), startedAt: expect.any(Number) },
      reason: `process ${holder.child.pid} is gone`,
    });
    expect(JSON.parse(readFileSync(`${path}.lock`, "utf8"))).toMatchObject({ pid: process.pid });
    await journal.close();
  });

  it("a lock from another host is refused (its process cannot be checked); an unreadable one is taken over", async () => {
    const path = join(folder, "foreign.journal");
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: 1, hostname: "some-other-host", startedAt: 1 }));
    await expect(openFileCallJournal({ path })).rejects.toMatchObject({
      code: "JOURNAL_LOCKED",
      details: { hostname: "some-other-host", pid: 1 },
    });
    writeFileSync(`${path}.lock`, "{half a lo");
    const journal = await openFileCallJournal({ path });
    expect(journal.recovery.staleLock).toEqual({ owner: undefined, reason: "the lock file was unreadable" });
    await journal.close();
  });

  it("close removes only its own lock", async () => {
    const path = join(folder, "replaced.journal");
    const journal = await openFileCallJournal({ path });
    const other = JSON.stringify({ pid: 999_999, hostname: hostname(), startedAt: 1, nonce: "someone else" });
    writeFileSync(`${path}.lock`, other);
    await journal.close();
    expect(readFileSync(`${path}.lock`, "utf8")).toBe(other);
  });
});
