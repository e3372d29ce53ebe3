import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { CallTable } from "../../packages/toolrelay/src/calls/index.js";
import { ToolCallAbortError } from "../../packages/toolrelay/src/tools/index.js";
import { defineTool } from "../../packages/toolrelay/src/tools/index.js";
import { callRequest, createHarness, deferredTool, flushMicrotasks, instantTool } from "./table-harness.js";

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

describe("CallTable cleanup (one place per call)", () => {
  it("leaves zero timers and zero running calls after every kind of settlement", async () => {
    vi.useFakeTimers();
    const tools = Array.from({ length: 5 }, (_, index) => deferredTool(`x${index}`, { timeoutMs: index === 1 ? 10 : 1_000 }));
    const h = createHarness({ reconnectGraceMs: 500 });
    const start = (index: number): void => void h.request(`r${index}`, `t${index}`, { tool: tools[index]!.tool });
    start(0);
    start(1);
    expect(vi.getTimerCount()).toBe(2); // one per distinct timeout
    tools[0]!.resolve("resolved");
    await flushMicrotasks();
    vi.advanceTimersByTime(10); // t1 times out
    start(2);
    h.table.cancel("cancelled"); // t2
    start(3);
    h.table.epochEnded();
    vi.advanceTimersByTime(500); // t3: grace expiry
    h.table.epochStarted(2, true);
    start(4);
    h.table.close(); // t4
    expect(h.settled.map((entry) => entry.outcome.kind)).toEqual(["ok", "timeout", "cancelled", "disconnected", "cancelled"]);
    expect(h.table.runningCount).toBe(0);
    expect(h.table.counts().timers).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a tool that never reads its signal gets no AbortController at all", () => {
    vi.useFakeTimers();
    const created: number[] = [];
    const Original = globalThis.AbortController;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        created.push(1);
      }
    };
    try {
      const h = createHarness({}, deferredTool().tool);
      for (let index = 0; index < 100; index++) h.request(`r${index}`, `t${index}`);
      h.table.close();
      expect(created).toHaveLength(0);
      expect(h.settled).toHaveLength(100);
    } finally {
      globalThis.AbortController = Original;
    }
  });

  it("an output callback that throws changes nothing: the write counts as not written, the call still settles once", () => {
    vi.useFakeTimers();
    let calls = 0;
    const fail = (): never => {
      calls++;
      throw new Error("listener bug");
    };
    const table = new CallTable({ output: { response: fail, start: fail, end: fail, late: fail, progress: fail } });
    expect(table.request(callRequest("r1", "t1", { epoch: 1, tool: instantTool() }))).toBe("started");
    expect(table.counts().held).toBe(1);
    expect(calls).toBeGreaterThan(0);
    expect(table.runningCount).toBe(0);
  });
});

describe("CallTable close", () => {
  it("settles every running call at once (not at its deadline) and clears every timer", () => {
    vi.useFakeTimers();
    const tools = Array.from({ length: 5 }, (_, index) => deferredTool(`x${index}`, { timeoutMs: 60_000 + index, readsSignal: true }));
    const h = createHarness();
    for (const [index, tool] of tools.entries()) h.request(`r${index}`, `t${index}`, { tool: tool.tool });
    h.table.epochEnded();
    expect(vi.getTimerCount()).toBe(6);
    h.link.up = false;
    h.table.close("the session was closed");
    expect(h.settled.every((entry) => entry.record.settledAt === entry.record.startedAt && entry.outcome.kind === "cancelled")).toBe(true);
    expect(
      tools.every((tool) => ToolCallAbortError.is(tool.context?.signal.reason) && tool.context!.signal.reason.kind === "cancelled"),
    ).toBe(true);
    expect(h.frames).toHaveLength(0); // nothing could be written
    expect(vi.getTimerCount()).toBe(0);
    expect(h.table.counts().held).toBe(0);
  });

  it("still replays a call settled before close to its re-offered request id, and never answers a request id twice", () => {
    vi.useFakeTimers();
    const h = createHarness();
    h.request("r1", "t1", { tool: instantTool("x", "done") });
    h.request("r2", "t2", { tool: deferredTool().tool });
    h.table.close("bye");
    expect(h.request("r1", "t1")).toBe("duplicate");
    expect(h.request("r2", "t2")).toBe("duplicate");
    h.link.epoch = 2;
    expect(h.request("r1", "t1")).toBe("resent");
    expect(h.frames.map((frame) => frame.requestId)).toEqual(["r1", "r2", "r1"]);
    expect(h.frames[2]?.response).toBe(h.frames[0]?.response);
    // A new request id for an answered call is a new model request, and the table is closed: cancelled, nothing run.
    expect(h.request("r3", "t1")).toBe("closed");
  });

  it("is idempotent, and later requests are answered cancelled without running or being kept", () => {
    vi.useFakeTimers();
    const slow = deferredTool();
    const h = createHarness({}, slow.tool);
    h.table.close("closed for good");
    h.table.close("second close");
    expect(h.request("r1", "t1")).toBe("closed");
    expect(h.request("r1", "t1")).toBe("closed");
    expect(slow.calls).toBe(0);
    expect(h.frames.map((frame) => frame.response)).toEqual([
      { error: "Tool call cancelled: closed for good" },
      { error: "Tool call cancelled: closed for good" },
    ]);
    expect(h.settled).toHaveLength(0);
    h.table.epochEnded();
    h.table.epochStarted(2, true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("no unhandled rejection anywhere: callbacks that reject or resolve after close", async () => {
    const { rejections } = await watchProcess(async () => {
      const rejecting = deferredTool("a");
      const late = deferredTool("b");
      const onAbort = defineTool({
        name: "c",
        description: "rejects with its signal's reason",
        inputSchema: z.object({}),
        execute: (_input, { signal }) =>
          new Promise<string>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })),
      });
      const h = createHarness();
      h.request("r1", "t1", { tool: rejecting.tool });
      h.request("r2", "t2", { tool: late.tool });
      h.request("r3", "t3", { tool: onAbort });
      h.table.close();
      rejecting.reject(new Error("rejected after close"));
      late.resolve("late");
      await flushMicrotasks();
      expect(h.late.map((entry) => entry.outcome.kind).sort()).toEqual(["ok", "tool-error", "tool-error"]);
    });
    expect(rejections).toEqual([]);
  });
});
