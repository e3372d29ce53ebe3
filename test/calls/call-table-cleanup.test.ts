import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ToolCallAbortError, type CallOutcome } from "../../src/calls/index.js";
import { timerCleanupScenario } from "./scenarios.js";
import { callKey, createHarness, deferredRun, flushMicrotasks, ok } from "./table-harness.js";

afterEach(() => {
  vi.useRealTimers();
});

/** Collect process warnings and unhandled rejections while `body` runs (real timers, so they get emitted). */
async function watchProcess(body: () => Promise<void>): Promise<{ warnings: Error[]; rejections: unknown[] }> {
  const warnings: Error[] = [];
  const rejections: unknown[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  const onRejection = (reason: unknown): void => void rejections.push(reason);
  process.on("warning", onWarning);
  process.on("unhandledRejection", onRejection);
  try {
    await body();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("warning", onWarning);
    process.off("unhandledRejection", onRejection);
  }
  return { warnings, rejections };
}

describe("CallTable cleanup (one finally per call)", () => {
  it("clears the timer of a call that settles before its deadline", async () => {
    vi.useFakeTimers();
    await timerCleanupScenario();
  });

  it("leaves zero timers and zero pending entries after every kind of settlement", async () => {
    vi.useFakeTimers();
    const { table, settled } = createHarness({ reconnectGraceMs: 500 });
    const caller = new AbortController();
    const runs = Array.from({ length: 6 }, () => deferredRun());
    const start = (index: number, timeoutMs = 1_000): void =>
      void table.request({ requestId: `r${index}`, key: callKey(`t${index}`), toolName: "x", timeoutMs, signal: caller.signal, run: runs[index]!.run });
    start(0);
    start(1, 10);
    start(2);
    start(3);
    expect(vi.getTimerCount()).toBe(4);
    runs[0]!.resolve(ok("resolved"));
    await flushMicrotasks();
    vi.advanceTimersByTime(10); // t1 times out
    table.cancel((key) => key.toolCallId === "t2", "cancelled");
    table.linkDown();
    vi.advanceTimersByTime(500); // t3: grace expiry
    table.linkUp({ redeliver: true });
    start(4);
    caller.abort("caller"); // t4
    expect(settled.map((event) => event.outcome.kind)).toEqual(["ok", "timeout", "cancelled", "disconnected", "cancelled"]);
    expect(table.pendingCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
  });

  it("one caller signal reused for 1,000 sequential calls: 0 listeners left, no MaxListenersExceeded warning", async () => {
    const caller = new AbortController();
    const { warnings, rejections } = await watchProcess(async () => {
      const { table } = createHarness();
      for (let index = 0; index < 1_000; index++) {
        const tool = deferredRun();
        table.request({ requestId: `r${index}`, key: callKey(`t${index}`), toolName: "x", timeoutMs: 60_000, signal: caller.signal, run: tool.run });
        expect(getEventListeners(caller.signal, "abort")).toHaveLength(1);
        tool.resolve(ok("x"));
        await flushMicrotasks();
      }
      expect(table.pendingCount).toBe(0);
      table.close();
    });
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
    expect(warnings.filter((warning) => warning.name === "MaxListenersExceededWarning")).toEqual([]);
    expect(rejections).toEqual([]);
  });

  it("one caller signal shared by 1,000 concurrent calls carries one listener, then none", async () => {
    const caller = new AbortController();
    const { warnings } = await watchProcess(async () => {
      const { table, settled } = createHarness();
      const tools = Array.from({ length: 1_000 }, () => deferredRun());
      tools.forEach((tool, index) =>
        table.request({ requestId: `r${index}`, key: callKey(`t${index}`), toolName: "x", timeoutMs: 60_000, signal: caller.signal, run: tool.run }),
      );
      expect(table.pendingCount).toBe(1_000);
      expect(getEventListeners(caller.signal, "abort")).toHaveLength(1);
      for (const tool of tools.slice(0, 500)) tool.resolve(ok("x"));
      await flushMicrotasks();
      expect(table.pendingCount).toBe(500);
      expect(getEventListeners(caller.signal, "abort")).toHaveLength(1);
      caller.abort(new Error("stop"));
      expect(settled).toHaveLength(1_000);
      expect(settled.slice(500).every((event) => event.outcome.kind === "cancelled")).toBe(true);
      expect(table.pendingCount).toBe(0);
      table.close();
    });
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
    expect(warnings.filter((warning) => warning.name === "MaxListenersExceededWarning")).toEqual([]);
  });

  it("removes the caller listener even when the signal never fires", async () => {
    vi.useFakeTimers();
    const caller = new AbortController();
    const { table } = createHarness();
    table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 5, signal: caller.signal, run: deferredRun().run });
    vi.advanceTimersByTime(5);
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
  });
});

describe("CallTable close", () => {
  it("settles every running call at once (not at its deadline), with its response, and clears every timer", () => {
    vi.useFakeTimers();
    const { table, frames, settled } = createHarness();
    const tools = Array.from({ length: 5 }, () => deferredRun());
    tools.forEach((tool, index) => table.request({ requestId: `r${index}`, key: callKey(`t${index}`), toolName: "x", timeoutMs: 60_000 + index, run: tool.run }));
    table.linkDown();
    expect(vi.getTimerCount()).toBe(6);
    table.linkUp({ redeliver: true });
    table.linkDown();
    table.close("the session was closed");
    expect(settled).toHaveLength(5);
    expect(settled.every((event) => event.durationMs === 0 && event.outcome.kind === "cancelled")).toBe(true);
    expect(tools.every((tool) => ToolCallAbortError.is(tool.signal?.reason) && tool.signal.reason.kind === "cancelled")).toBe(true);
    expect(frames).toHaveLength(0); // the link was down: nothing to write to
    expect(vi.getTimerCount()).toBe(0);
    expect(table.pendingCount).toBe(0);
    expect(table.heldCount).toBe(0);
    expect(table.closed).toBe(true);
  });

  it("still replays a key settled before close, and never answers a request id twice", () => {
    vi.useFakeTimers();
    const { table, frames } = createHarness();
    table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: () => ok("done") });
    table.request({ requestId: "r2", key: callKey("t2"), toolName: "x", timeoutMs: 1_000, run: deferredRun().run });
    table.close("bye");
    expect(table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: () => ok("again") })).toBe("duplicate");
    expect(table.request({ requestId: "r2", key: callKey("t2"), toolName: "x", timeoutMs: 1_000, run: () => ok("again") })).toBe("duplicate");
    expect(table.request({ requestId: "r3", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: () => ok("again") })).toBe("replayed");
    expect(frames.map((frame) => frame.requestId)).toEqual(["r1", "r2", "r3"]);
    expect(frames[2]?.response).toBe(frames[0]?.response);
  });

  it("drops what it holds when closed while the link is down", () => {
    vi.useFakeTimers();
    const { table, frames } = createHarness();
    table.linkDown();
    table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: () => ok("done") });
    expect(table.heldCount).toBe(1);
    table.close();
    expect(table.heldCount).toBe(0);
    expect(table.request({ requestId: "r2", key: callKey("t2"), toolName: "x", timeoutMs: 1_000, run: () => ok("x") })).toBe("closed");
    expect(table.heldCount).toBe(0);
    expect(frames).toHaveLength(0);
  });

  it("sends the cancellations when the link is up", () => {
    vi.useFakeTimers();
    const { table, frames } = createHarness();
    table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: deferredRun().run });
    table.close("bye");
    expect(frames).toEqual([{ requestId: "r1", response: { error: "Tool call cancelled: bye" } }]);
  });

  it("is idempotent, and later requests are answered cancelled without running", () => {
    vi.useFakeTimers();
    const { table, frames, settled } = createHarness();
    table.close("closed for good");
    table.close("second close");
    const tool = deferredRun();
    expect(table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: tool.run })).toBe("closed");
    expect(tool.calls).toBe(0);
    expect(frames).toEqual([{ requestId: "r1", response: { error: "Tool call cancelled: closed for good" } }]);
    expect(settled).toHaveLength(0);
    expect(table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: tool.run })).toBe("duplicate");
    expect(table.request({ requestId: "r2", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: tool.run })).toBe("replayed");
    expect(frames.map((frame) => frame.requestId)).toEqual(["r1", "r2"]);
    expect(tool.calls).toBe(0);
    table.linkDown();
    table.linkUp({ redeliver: true });
    expect(vi.getTimerCount()).toBe(0);
    expect(table.pendingCount).toBe(0);
  });

  it("no unhandled rejection anywhere: callbacks that reject or throw after close", async () => {
    const { rejections } = await watchProcess(async () => {
      const { table, late } = createHarness();
      const rejecting = deferredRun();
      const throwingLate = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 60_000, run: rejecting.run });
      table.request({ requestId: "r2", key: callKey("t2"), toolName: "x", timeoutMs: 60_000, run: throwingLate.run });
      table.request({
        requestId: "r3",
        key: callKey("t3"),
        toolName: "x",
        timeoutMs: 60_000,
        run: (signal) =>
          new Promise<CallOutcome>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })),
      });
      table.close();
      rejecting.reject(new Error("rejected after close"));
      throwingLate.resolve(ok("late"));
      await flushMicrotasks();
      expect(late.map((event) => event.outcome.kind).sort()).toEqual(["ok", "tool-error", "tool-error"]);
    });
    expect(rejections).toEqual([]);
  });
});
