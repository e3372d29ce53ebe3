/**
 * The call table's approval step (`needsApproval`, issue 26), with fake timers: the approval wait
 * has its own deadline (`approvalTimeoutMs`); an approved call's deadline starts at the approval
 * and is clipped to what is left of the runtime's 300 s; a cancel, close or disconnect during the
 * approval settles the call once, fires the approver's signal, and a late approval does nothing; a
 * `needsApproval` that throws or rejects is a denial; a re-delivery while the approval is pending
 * joins it and is answered once; the text the model reads for each denial.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { deniedText, type ApprovalAsk, type ApprovalVerdict, type DeniedOutcome } from "../../packages/toolrelay/src/calls/index.js";
import { defineTool, type ClientTool, type NeedsApproval } from "../../packages/toolrelay/src/tools/index.js";
import { createHarness, flushMicrotasks, text } from "./table-harness.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** An approver the test answers: each ask waits for `answer(...)`. */
function approver() {
  const asks: ApprovalAsk[] = [];
  const pending: Array<(verdict: ApprovalVerdict) => void> = [];
  return {
    asks,
    approve: (ask: ApprovalAsk) => {
      asks.push(ask);
      return new Promise<ApprovalVerdict>((resolve) => pending.push(resolve));
    },
    answer(verdict: ApprovalVerdict = { approved: true }) {
      for (const resolve of pending.splice(0)) resolve(verdict);
    },
  };
}

/** A tool that asks (`needsApproval`), records its runs, and returns a promise the test settles (or a value at once). */
function askingTool(options: { needsApproval?: NeedsApproval<{ amount: number }>; timeoutMs?: number; instant?: boolean } = {}) {
  const runs: Array<{ amount: number }> = [];
  const pending: Array<(value: string) => void> = [];
  const tool = defineTool({
    name: "pay",
    description: "Pays",
    inputSchema: z.object({ amount: z.number().int(), note: z.string().default("none") }),
    needsApproval: options.needsApproval ?? true,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    execute: (input) => {
      runs.push({ amount: input.amount });
      if (options.instant === true) return `paid ${input.amount}`;
      return new Promise<string>((resolve) => pending.push(resolve));
    },
  });
  return {
    tool: tool as unknown as ClientTool,
    runs,
    finish(value = "paid") {
      for (const resolve of pending.splice(0)) resolve(value);
    },
  };
}

const input = { amount: 5 };

describe("CallTable approval", () => {
  it("asks with the validated input before running; nothing starts until approved; then it runs once", async () => {
    const asking = askingTool();
    const judge = approver();
    const h = createHarness({}, asking.tool, judge.approve);
    expect(h.request("r1", "t1", { input })).toBe("started");
    await flushMicrotasks();
    expect(judge.asks).toHaveLength(1);
    expect(judge.asks[0]!.input).toEqual({ amount: 5, note: "none" });
    expect(judge.asks[0]!.tool.name).toBe("pay");
    expect(judge.asks[0]!.signal.aborted).toBe(false);
    expect(asking.runs).toEqual([]);
    expect(h.starts).toEqual([]);
    expect(h.table.runningCount).toBe(1);

    judge.answer();
    await flushMicrotasks();
    expect(h.starts).toEqual(["r1"]);
    expect(asking.runs).toEqual([{ amount: 5 }]);
    asking.finish("paid 5");
    await flushMicrotasks();
    expect(h.frames).toEqual([{ requestId: "r1", response: text("paid 5"), epoch: 1 }]);
    expect(h.settled.map((entry) => entry.outcome.kind)).toEqual(["ok"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("without an approver the call is denied no-approver at once, never run, no timer left", () => {
    const asking = askingTool();
    const h = createHarness({}, asking.tool);
    h.request("r1", "t1", { input });
    expect(asking.runs).toEqual([]);
    expect(h.settled[0]!.outcome).toEqual({ kind: "denied", reason: "no-approver", message: "" });
    expect(h.frames[0]!.response).toEqual(
      text("Tool pay was not run: it needs the user's approval and this application cannot ask for it."),
    );
    expect(vi.getTimerCount()).toBe(0);
  });

  it("unanswered: denied timeout exactly at approvalTimeoutMs, the approver's signal fires, a late approval does nothing", async () => {
    const asking = askingTool({ timeoutMs: 1_000 });
    const judge = approver();
    const h = createHarness({ approvalTimeoutMs: 2_000 }, asking.tool, judge.approve);
    h.request("r1", "t1", { input });
    await flushMicrotasks();
    // The tool's own 1 s deadline does not count while it waits for approval.
    vi.advanceTimersByTime(1_999);
    expect(h.settled).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(h.settled.map((entry) => entry.outcome)).toEqual([{ kind: "denied", reason: "timeout", message: "2 s" }]);
    expect(judge.asks[0]!.signal.aborted).toBe(true);
    expect(h.frames.map((frame) => frame.response)).toEqual([
      text("Tool pay was not run: it needs the user's approval and nobody answered in time (2 s)."),
    ]);
    judge.answer();
    await flushMicrotasks();
    expect(asking.runs).toEqual([]);
    expect(h.starts).toEqual([]);
    expect(h.frames).toHaveLength(1);
    expect(h.late).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the tool's deadline starts when it is approved, not when the call arrived", async () => {
    const asking = askingTool({ timeoutMs: 10_000 });
    const judge = approver();
    const h = createHarness({ approvalTimeoutMs: 60_000 }, asking.tool, judge.approve);
    h.request("r1", "t1", { input });
    await flushMicrotasks();
    vi.advanceTimersByTime(8_000);
    judge.answer();
    await flushMicrotasks();
    expect(asking.runs).toHaveLength(1);
    vi.advanceTimersByTime(9_999);
    expect(h.settled).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(h.settled.map((entry) => entry.outcome)).toEqual([{ kind: "timeout", timeoutMs: 10_000 }]);
    expect(h.settled[0]!.record.settledAt - h.settled[0]!.record.startedAt).toBe(18_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("an approved call's deadline is clipped to what is left of the runtime's 300 s (whole seconds)", async () => {
    const asking = askingTool({ timeoutMs: 300_000 });
    const judge = approver();
    const h = createHarness({ approvalTimeoutMs: 299_000 }, asking.tool, judge.approve);
    h.request("r1", "t1", { input });
    await flushMicrotasks();
    vi.advanceTimersByTime(250_500);
    judge.answer();
    await flushMicrotasks();
    // 300 s − 250.5 s = 49.5 s left → 49 s, from the approval: it ends at 299.5 s, before the runtime gives up.
    vi.advanceTimersByTime(48_999);
    expect(h.settled).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(h.settled.map((entry) => entry.outcome)).toEqual([{ kind: "timeout", timeoutMs: 49_000 }]);
    expect(h.settled[0]!.record.settledAt - h.settled[0]!.record.startedAt).toBe(299_500);
  });

  it("approved with less than a second of the runtime's 300 s left (its needsApproval took a while): it still gets 1 s", async () => {
    const slowCheck = askingTool({
      timeoutMs: 300_000,
      needsApproval: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 2_000)),
    });
    const judge = approver();
    const h = createHarness({ approvalTimeoutMs: 299_000 }, slowCheck.tool, judge.approve);
    h.request("r1", "t1", { input });
    vi.advanceTimersByTime(2_000);
    await flushMicrotasks();
    expect(judge.asks).toHaveLength(1);
    vi.advanceTimersByTime(297_500);
    judge.answer();
    await flushMicrotasks();
    expect(slowCheck.runs).toHaveLength(1);
    vi.advanceTimersByTime(999);
    expect(h.settled).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(h.settled.map((entry) => entry.outcome)).toEqual([{ kind: "timeout", timeoutMs: 1_000 }]);
    expect(h.settled[0]!.record.settledAt - h.settled[0]!.record.startedAt).toBe(300_500);
  });

  it("a tool timeout shorter than what is left wins", async () => {
    const asking = askingTool({ timeoutMs: 5_000 });
    const judge = approver();
    const h = createHarness({ approvalTimeoutMs: 120_000 }, asking.tool, judge.approve);
    h.request("r1", "t1", { input });
    await flushMicrotasks();
    vi.advanceTimersByTime(100_000);
    judge.answer();
    await flushMicrotasks();
    vi.advanceTimersByTime(5_000);
    expect(h.settled.map((entry) => entry.outcome)).toEqual([{ kind: "timeout", timeoutMs: 5_000 }]);
  });

  for (const [name, end, expected] of [
    [
      "cancel",
      (h: ReturnType<typeof createHarness>) => h.table.cancel("the turn was aborted"),
      { kind: "cancelled", reason: "the turn was aborted" },
    ],
    ["close", (h: ReturnType<typeof createHarness>) => h.table.close(), { kind: "cancelled", reason: "the session was closed" }],
    [
      "a local reconnect (the runtime forgot the request)",
      (h: ReturnType<typeof createHarness>) => {
        h.table.epochEnded();
        h.link.epoch = 2;
        h.table.epochStarted(2, false);
      },
      { kind: "disconnected", graceMs: 30_000 },
    ],
    [
      "a disconnect past the grace window",
      (h: ReturnType<typeof createHarness>) => {
        h.link.up = false;
        h.table.epochEnded();
        vi.advanceTimersByTime(30_000);
      },
      { kind: "disconnected", graceMs: 30_000 },
    ],
  ] as const) {
    it(`${name} during the approval: settled once, the approver's signal fires, a late approval runs nothing`, async () => {
      const asking = askingTool();
      const judge = approver();
      const h = createHarness({}, asking.tool, judge.approve);
      h.request("r1", "t1", { input });
      await flushMicrotasks();
      end(h);
      expect(h.settled.map((entry) => entry.outcome)).toEqual([expected]);
      expect(judge.asks[0]!.signal.aborted).toBe(true);
      judge.answer();
      await flushMicrotasks();
      vi.advanceTimersByTime(300_000);
      expect(asking.runs).toEqual([]);
      expect(h.starts).toEqual([]);
      expect(h.settled).toHaveLength(1);
      expect(h.late).toEqual([]);
      expect(h.attempts.length).toBeLessThanOrEqual(1);
      expect(vi.getTimerCount()).toBe(0);
    });
  }

  it("a needsApproval that throws is a denial (failed); the approver is not asked, the tool not run", () => {
    const asking = askingTool({
      needsApproval: () => {
        throw new Error("rules unavailable");
      },
    });
    const judge = approver();
    const h = createHarness({}, asking.tool, judge.approve);
    h.request("r1", "t1", { input });
    expect(judge.asks).toEqual([]);
    expect(asking.runs).toEqual([]);
    expect(h.settled[0]!.outcome).toEqual({ kind: "denied", reason: "failed", message: "needsApproval threw: rules unavailable" });
    expect(h.frames[0]!.response).toEqual(
      text("Tool pay was not run: its approval could not be checked (needsApproval threw: rules unavailable)."),
    );
  });

  it("a needsApproval that answers something other than a boolean fails closed: denied (failed), not run, not asked", async () => {
    for (const [answer, said] of [
      ["yes", '"yes"'],
      [undefined, "undefined"],
      [1, "1"],
    ] as const) {
      // An untyped policy (a JavaScript caller, a cast) may answer anything.
      const loose = askingTool({ needsApproval: (() => answer) as unknown as () => boolean });
      const judge = approver();
      const h = createHarness({}, loose.tool, judge.approve);
      h.request("r1", "t1", { input });
      await flushMicrotasks();
      expect(h.settled[0]!.outcome).toEqual({ kind: "denied", reason: "failed", message: `needsApproval answered ${said}, not a boolean` });
      expect(loose.runs).toEqual([]);
      expect(judge.asks).toEqual([]);
    }
  });

  it("a needsApproval that rejects is a denial (failed); async true asks, async false runs unasked", async () => {
    const rejecting = askingTool({ needsApproval: async () => Promise.reject(new Error("policy server down")) });
    const judge = approver();
    const h = createHarness({}, rejecting.tool, judge.approve);
    h.request("r1", "t1", { input });
    await flushMicrotasks();
    expect(h.settled[0]!.outcome).toEqual({ kind: "denied", reason: "failed", message: "needsApproval failed: policy server down" });
    expect(rejecting.runs).toEqual([]);
    expect(judge.asks).toEqual([]);

    const byAmount = askingTool({ needsApproval: async ({ amount }) => amount > 100, instant: true });
    h.request("r2", "t2", { input: { amount: 50 }, tool: byAmount.tool });
    await flushMicrotasks();
    expect(judge.asks).toEqual([]);
    expect(byAmount.runs).toEqual([{ amount: 50 }]);
    h.request("r3", "t3", { input: { amount: 500 }, tool: byAmount.tool });
    await flushMicrotasks();
    expect(judge.asks.map((ask) => ask.input)).toEqual([{ amount: 500, note: "none" }]);
    expect(byAmount.runs).toHaveLength(1);
    judge.answer();
    await flushMicrotasks();
    expect(byAmount.runs).toEqual([{ amount: 50 }, { amount: 500 }]);
    expect(h.settled.map((entry) => entry.outcome.kind)).toEqual(["denied", "ok", "ok"]);
  });

  it("an approver that throws or rejects is a denial (failed)", async () => {
    const asking = askingTool();
    const throwing = createHarness({}, asking.tool, () => {
      throw new Error("prompt crashed");
    });
    throwing.request("r1", "t1", { input });
    await flushMicrotasks();
    expect(throwing.settled[0]!.outcome).toEqual({ kind: "denied", reason: "failed", message: "prompt crashed" });
    const rejecting = createHarness({}, asking.tool, () => Promise.reject(new Error("prompt gone")));
    rejecting.request("r1", "t1", { input });
    await flushMicrotasks();
    expect(rejecting.settled[0]!.outcome).toEqual({ kind: "denied", reason: "failed", message: "prompt gone" });
    expect(asking.runs).toEqual([]);
  });

  it("declined: settled denied with the approver's words, never run", async () => {
    const asking = askingTool();
    const judge = approver();
    const h = createHarness({}, asking.tool, judge.approve);
    h.request("r1", "t1", { input });
    await flushMicrotasks();
    judge.answer({ approved: false, reason: "declined", message: "over budget" });
    await flushMicrotasks();
    expect(asking.runs).toEqual([]);
    expect(h.settled[0]!.outcome).toEqual({ kind: "denied", reason: "declined", message: "over budget" });
    expect(h.frames[0]!.response).toEqual(text("The user declined this call of tool pay; it was not run. The user said: over budget"));
    expect(judge.asks[0]!.signal.aborted).toBe(true);
  });

  it("an approver's replaced input is validated again: invalid → invalid-input (not run); valid → run with it (defaults applied)", async () => {
    const asking = askingTool({ instant: true });
    const judge = approver();
    const h = createHarness({}, asking.tool, judge.approve);
    h.request("r1", "t1", { input });
    await flushMicrotasks();
    judge.answer({ approved: true, input: { amount: "five" } });
    await flushMicrotasks();
    expect(asking.runs).toEqual([]);
    expect(h.settled[0]!.outcome).toMatchObject({ kind: "invalid-input", issues: [{ path: "amount" }] });
    h.request("r2", "t2", { input });
    await flushMicrotasks();
    judge.answer({ approved: true, input: { amount: 3 } });
    await flushMicrotasks();
    expect(asking.runs).toEqual([{ amount: 3 }]);
    expect(h.frames[1]!.response).toEqual(text("paid 3"));
  });

  it("a re-delivery while the approval is pending (the same request id, then a new one of the same call) joins: asked once, run once, each request answered once", async () => {
    const asking = askingTool();
    const judge = approver();
    const h = createHarness({}, asking.tool, judge.approve);
    expect(h.request("r1", "t1", { input })).toBe("started");
    await flushMicrotasks();
    expect(h.request("r1", "t1", { input })).toBe("duplicate");
    expect(h.request("r2", "t1", { input })).toBe("joined");
    // A reconnect to a runtime that kept the call (cloud), and the relay's re-offer of r1 on the new epoch.
    h.table.epochEnded();
    h.link.epoch = 2;
    h.table.epochStarted(2, true);
    expect(h.request("r1", "t1", { input, epoch: 2 })).toBe("duplicate");
    await flushMicrotasks();
    expect(judge.asks).toHaveLength(1);
    judge.answer();
    await flushMicrotasks();
    expect(asking.runs).toHaveLength(1);
    asking.finish("paid once");
    await flushMicrotasks();
    expect(h.frames.map((frame) => frame.requestId).sort()).toEqual(["r1", "r2"]);
    expect(h.frames.every((frame) => JSON.stringify(frame.response) === JSON.stringify(text("paid once")))).toBe(true);
    expect(h.settled).toHaveLength(1);
    expect(h.settled[0]!.requestIds).toEqual(["r1", "r2"]);
  });

  it("a call that does not ask (needsApproval false, or a function saying no) never reaches the approver", async () => {
    const judge = approver();
    const quiet = askingTool({ needsApproval: () => false, instant: true });
    const h = createHarness({}, quiet.tool, judge.approve);
    h.request("r1", "t1", { input });
    await flushMicrotasks();
    expect(judge.asks).toEqual([]);
    expect(h.frames[0]!.response).toEqual(text("paid 5"));
  });
});

describe("deniedText", () => {
  const outcome = (reason: DeniedOutcome["reason"], message: string): DeniedOutcome => ({ kind: "denied", reason, message });
  it("says per reason that the call was not run, without an error marker", () => {
    expect(deniedText("pay", outcome("declined", "over budget"))).toBe(
      "The user declined this call of tool pay; it was not run. The user said: over budget",
    );
    expect(deniedText("pay", outcome("declined", ""))).toBe("The user declined this call of tool pay; it was not run.");
    expect(deniedText("pay", outcome("timeout", "120 s"))).toBe(
      "Tool pay was not run: it needs the user's approval and nobody answered in time (120 s).",
    );
    expect(deniedText("pay", outcome("no-approver", ""))).toBe(
      "Tool pay was not run: it needs the user's approval and this application cannot ask for it.",
    );
    expect(deniedText("pay", outcome("failed", "needsApproval threw: x"))).toBe(
      "Tool pay was not run: its approval could not be checked (needsApproval threw: x).",
    );
    for (const reason of ["declined", "timeout", "no-approver", "failed"] as const) {
      const said = deniedText("pay", outcome(reason, "m"));
      expect(said).toContain("not run");
      expect(said).not.toMatch(/^Error/);
    }
  });
});
