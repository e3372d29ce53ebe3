/**
 * The file journal on real files: what it writes survives a close and a `kill -9` (every `start`
 * that resolved is found after reopening), `start` resolves only once its line is in the file,
 * writes of one tick share one write + one fsync, the file is 0600 in a 0700 folder, damage is
 * dropped and reported (never thrown), a truncated tail is cut, compaction keeps what is live, a
 * write failure (a real EFBIG under `ulimit -f`) rejects that write and nothing else.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "../../packages/toolrelay/src/calls/index.js";
import type { Timers } from "../../packages/toolrelay/src/internal/timers.js";
import { openFileCallJournal } from "../../packages/toolrelay/src/journal/index.js";
import { GroupCommit, type CommitFile } from "../../packages/toolrelay/src/journal/group-commit.js";
import { encodeJournalLine } from "../../packages/toolrelay/src/journal/journal-lines.js";
import { startedEntry } from "../support/journal-entry.js";

const folder = mkdtempSync(join(tmpdir(), "file-journal-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(folder, `j${files++}`, "calls.journal");
const entry = (key: string): JournalEntry => startedEntry(key, 1_000);
const paid = (seat: number) => ({ result: { content: [{ type: "text" as const, text: `paid ${seat} ✓` }] } });
/** A clock the test sets. */
const clock = (start: number) => {
  let now = start;
  const timers: Timers = { setTimeout: () => 0, clearTimeout: () => undefined, now: () => now };
  const set = (value: number): void => {
    now = value;
  };
  return { timers, set };
};

/** Run `code` (an ES module; `journal` is the journal package's index) in a new Node process. */
function child(code: string, options: { shell?: string } = {}) {
  const source = `const journal = await import(${JSON.stringify(new URL("../../packages/toolrelay/src/journal/index.ts", import.meta.url).pathname)});\n${code}`;
  const node = [process.execPath, "--import", "tsx", "--input-type=module", "-e", source];
  const spawned = options.shell
    ? spawn("bash", ["-c", `${options.shell}; exec "$@"`, "bash", ...node], { cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"] })
    : spawn(node[0]!, node.slice(1), { cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  spawned.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  spawned.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => spawned.on("exit", (code) => resolve(code)));
  return { process: spawned, exited, output: () => stdout, errors: () => stderr };
}

describe("file journal: what it writes stays", () => {
  it("start, settle and alias survive a close and a reopen; the response byte for byte", async () => {
    const path = freshPath();
    const journal = await openFileCallJournal({ path });
    expect(journal.kind).toBe("file");
    expect(await journal.start(entry("k1"), { seat: 1 })).toBeUndefined();
    await journal.start(entry("k2"), {});
    await journal.settle("k1", paid(1), 2_000);
    await journal.alias("a1", "k1");
    expect(await journal.start(entry("k1"), {})).toMatchObject({ key: "k1", state: "settled" });
    await journal.close();
    const reports: unknown[] = [];
    const reopened = await openFileCallJournal({ path, onRecovery: (report) => reports.push(report) });
    expect(reports).toEqual([reopened.recovery]);
    expect(reopened.recovery).toMatchObject({
      created: false,
      records: 2,
      started: 1,
      settled: 1,
      aliases: 1,
      droppedCount: 0,
      truncatedBytes: 0,
    });
    expect(JSON.stringify(reopened.find("a1")?.response)).toBe(JSON.stringify(paid(1)));
    expect(reopened.find("k2")?.state).toBe("started");
    expect(reopened.find("k1")).not.toHaveProperty("input");
    await reopened.close();
  });

  it("a start resolves only once its line is in the file (read through another handle), also 50 in one tick", async () => {
    const path = freshPath();
    const journal = await openFileCallJournal({ path });
    const seen: boolean[] = [];
    await Promise.all(
      Array.from({ length: 50 }, (_, number) =>
        journal.start(entry(`tick_${number}`), {}).then(() => seen.push(readFileSync(path, "utf8").includes(`"key":"tick_${number}"`))),
      ),
    );
    expect(seen).toHaveLength(50);
    expect(seen.every(Boolean)).toBe(true);
    await journal.close();
  });

  it("group commit: one write and one fsync per round, the fsync before anyone resolves; none with fsync off", async () => {
    for (const fsync of [true, false]) {
      const handle = await open(join(folder, `group-${String(fsync)}`), "w+");
      const events: string[] = [];
      const counted: CommitFile = {
        write(buffer, offset, length, position) {
          events.push("write");
          return handle.write(buffer, offset, length, position);
        },
        sync() {
          events.push("sync");
          return handle.sync();
        },
        truncate(length) {
          events.push("truncate");
          return handle.truncate(length);
        },
      };
      const commit = new GroupCommit(counted, 0, fsync);
      const first = Array.from({ length: 100 }, (_, number) => commit.append(`line ${number}\n`).then(() => events.push("resolved")));
      await Promise.all(first);
      await commit.append("last\n");
      expect(events.filter((event) => event !== "resolved")).toEqual(fsync ? ["write", "sync", "write", "sync"] : ["write", "write"]);
      expect(events.indexOf("resolved")).toBe(fsync ? 2 : 1);
      expect(readFileSync(join(folder, `group-${String(fsync)}`), "utf8").split("\n")).toHaveLength(102);
      await handle.close();
    }
  });

  it("every start that resolved before a kill -9 mid-writes is found after reopening", async () => {
    const path = freshPath();
    const writer = child(`
      const j = await journal.openFileCallJournal({ path: ${JSON.stringify(path)} });
      const entry = (key) => ({ key, state: "started", toolName: "pay", agentId: "a", conversationId: "c", toolCallId: key, inputSha256: "s", startedAt: 1 });
      let next = 0;
      const lane = async () => { for (;;) { const key = "kill_" + next++; await j.start(entry(key), {}); process.stdout.write(key + "\\n"); if (next % 3 === 0) await j.settle(key, { error: "x".repeat(200) }, 2); } };
      for (let lane_ = 0; lane_ < 8; lane_++) lane();
    `);
    while (writer.output().split("\n").length < 400) {
      if (writer.process.exitCode !== null) throw new Error(`writer exited: ${writer.errors()}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    writer.process.kill("SIGKILL");
    await writer.exited;
    const resolved = writer
      .output()
      .split("\n")
      .filter((line) => line.startsWith("kill_"));
    const journal = await openFileCallJournal({ path });
    expect(journal.recovery.staleLock).toMatchObject({ owner: { pid: writer.process.pid }, reason: expect.stringMatching(/gone/) });
    expect(resolved.filter((key) => journal.find(key) === undefined)).toEqual([]);
    expect(journal.recovery.droppedCount).toBeLessThanOrEqual(1);
    await journal.close();
  });
});

describe("file journal: the file", () => {
  it("creates the file 0600 in a folder created 0700; a file others can read is opened, left as is, and reported", async () => {
    const path = join(folder, "new", "deeper", "calls.journal");
    const journal = await openFileCallJournal({ path });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(folder, "new", "deeper")).mode & 0o777).toBe(0o700);
    expect(journal.recovery).toMatchObject({ created: true, fileMode: "600", exposed: false });
    await journal.close();
    const exposed = join(folder, "exposed.journal");
    writeFileSync(exposed, "", { mode: 0o644 });
    const opened = await openFileCallJournal({ path: exposed });
    expect(opened.recovery).toMatchObject({ fileMode: "644", exposed: true });
    expect(statSync(exposed).mode & 0o777).toBe(0o644);
    await opened.close();
  });

  it("drops damaged lines (counted, the first 20 listed), cuts a truncated tail, and appends cleanly after", async () => {
    const path = freshPath();
    const journal = await openFileCallJournal({ path });
    await journal.start(entry("keep"), {});
    await journal.close();
    const good = readFileSync(path, "utf8");
    const damaged = `${good}${"garbage line\n".repeat(25)}0badc0de {"kind":"start"}\n${good.split("\n")[1]!.slice(0, 30)}`;
    writeFileSync(path, damaged);
    const reopened = await openFileCallJournal({ path });
    expect(reopened.recovery).toMatchObject({ records: 1, droppedCount: 27, truncatedBytes: 30 });
    expect(reopened.recovery.dropped).toHaveLength(20);
    expect(reopened.recovery.dropped[0]).toEqual({ line: 3, reason: expect.stringMatching(/CRC prefix/) });
    expect(statSync(path).size).toBe(Buffer.byteLength(damaged) - 30);
    await reopened.start(entry("after"), {});
    await reopened.close();
    const third = await openFileCallJournal({ path });
    expect(third.recovery).toMatchObject({ records: 2, droppedCount: 26, truncatedBytes: 0 });
    await third.close();
  });

  it("refuses a file of a newer format version (INVALID_OPTIONS) and lets go of its lock", async () => {
    const path = freshPath();
    mkdirSync(join(path, ".."), { recursive: true });
    const header = encodeJournalLine({ kind: "header", format: "toolrelay-call-journal", version: 2, createdAt: 1 });
    writeFileSync(path, header.ok ? header.text : "");
    await expect(openFileCallJournal({ path })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringMatching(/format version 2/),
    });
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it("removes a compaction's leftover .compact at open, and keeps the journal", async () => {
    const path = freshPath();
    const journal = await openFileCallJournal({ path });
    await journal.start(entry("k1"), {});
    await journal.close();
    writeFileSync(`${path}.compact`, "half a compaction");
    const reopened = await openFileCallJournal({ path });
    expect(reopened.recovery).toMatchObject({ removedCompactFile: true, records: 1 });
    expect(existsSync(`${path}.compact`)).toBe(false);
    await reopened.close();
  });

  it("compacts past twice the live lines + 1,000, while writing and at open, keeping what is live", async () => {
    const path = freshPath();
    const { timers, set } = clock(1_000_000);
    const retention = { retentionMs: 1_000, tombstoneRetentionMs: 1_000 };
    const journal = await openFileCallJournal({ path, fsync: false, timers, retention });
    await journal.start(entry("alive"), {});
    // 100 ms apart with a 1 s retention: about 10 records are live at any time, so the file passes 2 × live + 1,000 lines.
    for (let number = 0; number < 1_200; number++) {
      set(1_002_000 + number * 100);
      await journal.start(entry(`old_${number}`), {});
    }
    expect(journal.counts().fileLines).toBeLessThan(1_100);
    await journal.settle("old_1199", paid(1), 5);
    await journal.close();
    const lines = readFileSync(path, "utf8").split("\n").length - 1;
    expect(lines).toBeLessThan(1_100);
    const reopened = await openFileCallJournal({ path, fsync: false, timers, retention });
    expect(reopened.find("old_1199")?.state).toBe("settled");
    expect(reopened.find("alive")).toBeUndefined();
    expect(reopened.recovery.droppedCount).toBe(0);
    await reopened.close();
    set(10_000_000);
    const later = await openFileCallJournal({ path, fsync: false, timers, retention });
    expect(later.recovery).toMatchObject({ compacted: false, records: 0 });
    await later.close();
  });

  it("compacts at open a file with more than twice its live lines + 1,000", async () => {
    const path = freshPath();
    const { timers, set } = clock(1_000);
    const journal = await openFileCallJournal({ path, fsync: false, timers, retention: { retentionMs: 10, tombstoneRetentionMs: 10 } });
    for (let number = 0; number < 1_100; number++) await journal.start(entry(`k${number}`), {});
    await journal.close();
    set(100_000);
    const reopened = await openFileCallJournal({ path, fsync: false, timers, retention: { retentionMs: 10, tombstoneRetentionMs: 10 } });
    expect(reopened.recovery).toMatchObject({ compacted: true, records: 0 });
    expect(readFileSync(path, "utf8").split("\n")).toHaveLength(2);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await reopened.close();
  });
});

describe("file journal: close and failures", () => {
  it("close flushes what is pending, removes the lock, is idempotent; writes after it reject ABORTED", async () => {
    const path = freshPath();
    const journal = await openFileCallJournal({ path });
    const pending = journal.start(entry("pending"), {});
    const closing = journal.close();
    expect(journal.close()).toBe(closing);
    await closing;
    await expect(pending).resolves.toBeUndefined();
    expect(existsSync(`${path}.lock`)).toBe(false);
    await expect(journal.start(entry("late"), {})).rejects.toMatchObject({ code: "ABORTED", message: expect.stringContaining(path) });
    await expect(journal.settle("pending", paid(1), 1)).rejects.toMatchObject({ code: "ABORTED" });
    await expect(journal.alias("a", "pending")).rejects.toMatchObject({ code: "ABORTED" });
    const reopened = await openFileCallJournal({ path });
    expect(reopened.find("pending")?.state).toBe("started");
    await reopened.close();
  });

  it("a write that fails (a real EFBIG under ulimit -f) rejects that start only; the next write cuts the tail and lands", async () => {
    const path = freshPath();
    const writer = child(
      `
      process.on("unhandledRejection", (error) => { console.log(JSON.stringify({ unhandled: String(error) })); process.exit(3); });
      const j = await journal.openFileCallJournal({ path: ${JSON.stringify(path)}, retention: { storeInputs: true } });
      const entry = (key) => ({ key, state: "started", toolName: "pay", agentId: "a", conversationId: "c", toolCallId: key, inputSha256: "s", startedAt: 1 });
      const results = {};
      await j.start(entry("small"), { text: "x".repeat(2000) }).then(() => (results.small = "ok"));
      await j.start(entry("big"), { text: "y".repeat(6000) }).then(() => (results.big = "ok"), (error) => (results.big = error.code + " " + error.details.code + " " + error.message));
      results.bigFound = j.find("big") !== undefined;
      await j.settle("small", { error: "done" }, 2).then(() => (results.settle = "ok"), (error) => (results.settle = String(error)));
      await j.close();
      console.log(JSON.stringify(results));
    `,
      { shell: "ulimit -f 4" },
    );
    expect(await writer.exited).toBe(0);
    const results = JSON.parse(writer.output().trim().split("\n").pop()!);
    expect(results).toMatchObject({
      small: "ok",
      big: expect.stringMatching(/^JOURNAL_FAILED EFBIG .*write failed/),
      bigFound: false,
      settle: "ok",
    });
    const reopened = await openFileCallJournal({ path });
    expect(reopened.recovery).toMatchObject({ records: 1, droppedCount: 0, truncatedBytes: 0 });
    expect(reopened.find("small")).toMatchObject({ state: "settled", response: { error: "done" } });
    expect(reopened.find("big")).toBeUndefined();
    await reopened.close();
  });

  it("a path that cannot be a journal is INVALID_OPTIONS naming it", async () => {
    await expect(openFileCallJournal({ path: "" })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    const blocker = join(folder, "a-file");
    writeFileSync(blocker, "");
    await expect(openFileCallJournal({ path: join(blocker, "calls.journal") })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining(blocker),
    });
  });
});
