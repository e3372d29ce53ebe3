/**
 * The call table with a call journal (issue 28): a call is recorded before its callback runs and
 * when it settles; a second table over the same journal (the process after a restart, or another
 * process) answers a re-offered call from the record — the stored response byte for byte, or
 * "outcome unknown" for one that started and never settled — and never runs it twice; an
 * idempotent tool runs again; a journal that cannot write means the call does not run; writes
 * wait for the claim, and a table that did not claim never overwrites another's record.
 */
import { describe, expect, it } from "vitest";
import { idempotencyKeyOf, outcomeUnknownText, type CallJournal, type JournalEntry } from "../../packages/toolrelay/src/calls/index.js";
import type { ToolCallResponseBody } from "../../packages/toolrelay/src/wire/index.js";
import { createHarness, deferredTool, flushMicrotasks, instantTool, text } from "./table-harness.js";

/** A journal in a Map, whose writes the test may hold (`hold = true`, then `release()`) or fail. */
class ScriptedJournal implements CallJournal {
  readonly kind = "scripted";
  readonly entries = new Map<string, JournalEntry>();
  readonly aliases = new Map<string, string>();
  readonly writes: string[] = [];
  hold = false;
  failStart: Error | undefined;
  failFind: Error | undefined;
  #held: Array<() => void> = [];

  find(key: string): JournalEntry | undefined {
    if (this.failFind) throw this.failFind;
    return this.entries.get(this.aliases.get(key) ?? key);
  }
  async start(entry: JournalEntry): Promise<JournalEntry | undefined> {
    await this.#gate();
    if (this.failStart) throw this.failStart;
    const existing = this.entries.get(entry.key);
    if (existing !== undefined) return existing;
    this.entries.set(entry.key, entry);
    this.writes.push(`start ${entry.toolCallId}`);
    return undefined;
  }
  async settle(key: string, response: ToolCallResponseBody, settledAt: number): Promise<void> {
    const entry = this.entries.get(key)!;
    this.entries.set(key, { ...entry, state: "settled", response, settledAt });
    this.writes.push(`settle ${entry.toolCallId}`);
  }
  async alias(alias: string, key: string): Promise<void> {
    this.aliases.set(alias, key);
    this.writes.push(`alias ${this.entries.get(key)?.toolCallId}`);
  }
  async close(): Promise<void> {}
  release(): void {
    this.hold = false;
    for (const go of this.#held.splice(0)) go();
  }
  #gate(): Promise<void> {
    return this.hold ? new Promise((resolve) => this.#held.push(resolve)) : Promise.resolve();
  }
}

describe("call table + journal: across a restart (a second table over the same journal)", () => {
  it("a settled call is answered with its stored response, byte for byte, and not run again", async () => {
    const journal = new ScriptedJournal();
    const first = createHarness({}, instantTool("pay", "paid 5"), undefined, journal);
    expect(first.request("r1", "call_0", { input: { amount: 5 } })).toBe("started");
    await flushMicrotasks();
    expect(first.frames.map((frame) => frame.response)).toEqual([text("paid 5")]);
    expect(journal.writes).toEqual(["start call_0", "settle call_0"]);

    let runs = 0;
    const tool = instantTool("pay", "paid AGAIN");
    const counted = {
      ...tool,
      execute: (...args: Parameters<typeof tool.execute>) => {
        runs++;
        return tool.execute(...args);
      },
    };
    const second = createHarness({}, counted, undefined, journal);
    second.request("r1", "call_0", { input: { amount: 5 } });
    await flushMicrotasks();
    expect(runs).toBe(0);
    expect(second.starts).toEqual([]);
    expect(JSON.stringify(second.frames[0]!.response)).toBe(JSON.stringify(first.frames[0]!.response));
    expect(second.settled.map((entry) => entry.outcome.kind)).toEqual(["recorded"]);
    // Answered from the record: nothing written again.
    expect(journal.writes).toEqual(["start call_0", "settle call_0"]);
  });

  it("a call that started and never settled is not run again: the model reads outcome unknown", async () => {
    const journal = new ScriptedJournal();
    const pay = deferredTool("pay");
    const first = createHarness({}, pay.tool, undefined, journal);
    first.request("r1", "call_0");
    await flushMicrotasks();
    expect(pay.calls).toBe(1); // the first life dies here, its call never settled

    const again = deferredTool("pay");
    const second = createHarness({}, again.tool, undefined, journal);
    second.request("r1", "call_0");
    await flushMicrotasks();
    expect(again.calls).toBe(0);
    expect(second.frames.map((frame) => frame.response)).toEqual([{ error: outcomeUnknownText("pay", "started") }]);
    expect(second.settled[0]!.outcome).toMatchObject({ kind: "outcome-unknown", reason: "started" });
  });

  it("…unless the tool says it is idempotent: then it runs again, with the same idempotency key, and its settlement is written", async () => {
    const journal = new ScriptedJournal();
    const first = createHarness({}, deferredTool("lookup", { annotations: { idempotentHint: true } }).tool, undefined, journal);
    first.request("r1", "call_0");
    await flushMicrotasks();
    const again = deferredTool("lookup", { annotations: { idempotentHint: true } });
    const second = createHarness({}, again.tool, undefined, journal);
    second.request("r1", "call_0");
    await flushMicrotasks();
    expect(again.calls).toBe(1);
    expect(again.context!.idempotencyKey).toBe(idempotencyKeyOf("agent-1", "conversation-1", "call_0", "r1"));
    again.resolve("found");
    await flushMicrotasks();
    expect(second.frames.map((frame) => frame.response)).toEqual([text("found")]);
    expect(journal.writes).toEqual(["start call_0", "settle call_0"]);
    expect(journal.entries.get(again.context!.idempotencyKey)).toMatchObject({ state: "settled", response: text("found") });
  });

  it("a call that needs approval and already started is not asked about again (the user is not asked to approve a call that ran)", async () => {
    const journal = new ScriptedJournal();
    const asks: string[] = [];
    const approve = async ({ record }: { record: { toolCallId: string } }) => {
      asks.push(record.toolCallId);
      return { approved: true as const };
    };
    const pay = deferredTool("pay");
    const asking = { ...pay.tool, needsApproval: true as const };
    const first = createHarness({}, asking, approve, journal);
    first.request("r1", "call_0");
    await flushMicrotasks();
    expect([asks, pay.calls]).toEqual([["call_0"], 1]);
    const second = createHarness({}, asking, approve, journal);
    second.request("r1", "call_0");
    await flushMicrotasks();
    expect([asks, pay.calls]).toEqual([["call_0"], 1]);
    expect(second.frames[0]!.response).toEqual({ error: outcomeUnknownText("pay", "started") });
  });

  it("an expired record (a tombstone) is outcome unknown too", async () => {
    const journal = new ScriptedJournal();
    const key = idempotencyKeyOf("agent-1", "conversation-1", "call_0", "r1");
    journal.entries.set(key, {
      key,
      state: "expired",
      toolName: "pay",
      agentId: "agent-1",
      conversationId: "conversation-1",
      toolCallId: "call_0",
      inputSha256: "x",
      startedAt: 1,
    });
    const pay = deferredTool("pay");
    const table = createHarness({}, pay.tool, undefined, journal);
    table.request("r1", "call_0");
    await flushMicrotasks();
    expect(pay.calls).toBe(0);
    expect(table.frames[0]!.response).toEqual({ error: outcomeUnknownText("pay", "expired") });
  });

  it("a re-attempt's request id is an alias: a restart that meets it first still finds the call", async () => {
    const journal = new ScriptedJournal();
    const pay = deferredTool("pay");
    const first = createHarness({}, pay.tool, undefined, journal);
    first.request("r1", "call_0", { turn: "t" });
    await flushMicrotasks();
    expect(first.request("r2", "call_0", { turn: "t" })).toBe("joined");
    await flushMicrotasks();
    expect(journal.writes).toEqual(["start call_0", "alias call_0"]);

    const again = deferredTool("pay");
    const second = createHarness({}, again.tool, undefined, journal);
    second.request("r2", "call_0", { turn: "t" });
    await flushMicrotasks();
    expect(again.calls).toBe(0);
    expect(second.frames[0]!.response).toEqual({ error: outcomeUnknownText("pay", "started") });
    expect(second.settled[0]!.record.idempotencyKey).toBe(idempotencyKeyOf("agent-1", "conversation-1", "call_0", "r1"));
  });

  it("two tables meet one call at once (two processes): the journal's create-if-absent lets one run it", async () => {
    const journal = new ScriptedJournal();
    const left = deferredTool("pay");
    const right = deferredTool("pay");
    const a = createHarness({}, left.tool, undefined, journal);
    const b = createHarness({}, right.tool, undefined, journal);
    a.request("r1", "call_0");
    b.request("r1", "call_0");
    await flushMicrotasks();
    expect(left.calls + right.calls).toBe(1);
    expect(b.frames[0]!.response).toEqual({ error: outcomeUnknownText("pay", "started") });
    left.resolve("paid");
    await flushMicrotasks();
    // b's settlement (outcome unknown) never overwrites a's record: only the owner writes it.
    expect(journal.writes).toEqual(["start call_0", "settle call_0"]);
    expect(journal.entries.get(idempotencyKeyOf("agent-1", "conversation-1", "call_0", "r1"))!.response).toEqual(text("paid"));
  });
});

/** One request (`r1`, `call_0`) for a deferred `pay` tool, on a table over `journal`. */
async function oneCall(journal: ScriptedJournal) {
  const pay = deferredTool("pay");
  const table = createHarness({}, pay.tool, undefined, journal);
  table.request("r1", "call_0");
  await flushMicrotasks();
  return { pay, table };
}

describe("call table + journal: the record comes first", () => {
  it("the callback starts only once the start record is written; a re-delivery meanwhile is a duplicate", async () => {
    const journal = new ScriptedJournal();
    journal.hold = true;
    const { pay, table } = await oneCall(journal);
    expect(pay.calls).toBe(0);
    expect(table.starts).toEqual([]);
    table.link.epoch = 2;
    expect(table.request("r1", "call_0", { epoch: 2 })).toBe("duplicate");
    journal.release();
    await flushMicrotasks();
    expect(pay.calls).toBe(1);
    expect(table.starts).toEqual(["r1"]);
  });

  it("a journal that cannot write: the call is not run, the model reads why", async () => {
    const journal = new ScriptedJournal();
    journal.failStart = new Error("ENOSPC: no space left on device");
    const { pay, table } = await oneCall(journal);
    expect(pay.calls).toBe(0);
    expect(table.settled[0]!.outcome.kind).toBe("journal-failed");
    expect(table.frames[0]!.response).toEqual({
      error:
        "Tool pay was not run: its call record could not be written (scripted journal: ENOSPC: no space left on device). Nothing was done; try again later.",
    });
  });

  it("a journal that cannot be read: not run either", async () => {
    const journal = new ScriptedJournal();
    journal.failFind = new Error("bucket gone");
    const { pay, table } = await oneCall(journal);
    expect(pay.calls).toBe(0);
    expect(table.settled[0]!.outcome).toEqual({ kind: "journal-failed", message: "scripted journal: bucket gone" });
  });

  it("a call cancelled while its record is being written: the settlement is written after the start, and the callback never runs", async () => {
    const journal = new ScriptedJournal();
    journal.hold = true;
    const { pay, table } = await oneCall(journal);
    expect(table.table.cancel("the turn was aborted")).toBe(1);
    journal.release();
    await flushMicrotasks();
    expect(pay.calls).toBe(0);
    expect(journal.writes).toEqual(["start call_0", "settle call_0"]);
    expect(table.frames.map((frame) => frame.response)).toEqual([{ error: "Tool call cancelled: the turn was aborted" }]);
  });

  it("calls refused before they would run (unknown tool, invalid input) write nothing", async () => {
    const journal = new ScriptedJournal();
    const table = createHarness({}, undefined, undefined, journal);
    table.request("r1", "call_0", { toolName: "nope" });
    await flushMicrotasks();
    expect(table.settled[0]!.outcome.kind).toBe("unknown-tool");
    expect(journal.writes).toEqual([]);
  });
});
