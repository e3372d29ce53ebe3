import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ToolCallAbortError, type CallOutcome } from "../../src/calls/index.js";
import { callKey, createHarness, deferredRun, flushMicrotasks, ok } from "./table-harness.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("CallTable settlement", () => {
  it("runs a new key exactly once with a fresh signal and delivers its outcome", async () => {
    const { table, frames, settled } = createHarness();
    const tool = deferredRun();
    expect(table.request({ requestId: "r1", key: callKey("t1"), toolName: "echo", timeoutMs: 1_000, run: tool.run })).toBe("started");
    expect(tool.calls).toBe(1);
    expect(tool.signal).toBeInstanceOf(AbortSignal);
    expect(tool.signal?.aborted).toBe(false);
    expect(table.pendingCount).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(500);
    tool.resolve(ok("hello"));
    await flushMicrotasks();
    expect(frames).toEqual([{ requestId: "r1", response: { result: { content: [{ type: "text", text: "hello" }] } } }]);
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({ key: callKey("t1"), requestIds: ["r1"], toolName: "echo", durationMs: 500 });
    expect(settled[0]?.outcome).toEqual(ok("hello"));
    expect(tool.signal?.aborted).toBe(false);
    expect(table.pendingCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(table.cachedCount).toBe(1);
  });

  it("each new key gets its own signal", () => {
    const { table } = createHarness();
    const signals: AbortSignal[] = [];
    for (const id of ["a", "b"]) {
      table.request({ requestId: id, key: callKey(id), toolName: "x", timeoutMs: 10, run: (signal) => (signals.push(signal), ok(id)) });
    }
    expect(signals).toHaveLength(2);
    expect(signals[0]).not.toBe(signals[1]);
  });

  it("settles at once when run returns an outcome synchronously", () => {
    const { table, frames } = createHarness();
    table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 10, run: () => ({ kind: "unknown-tool", toolName: "x", available: [] }) });
    expect(frames).toEqual([{ requestId: "r1", response: { error: "Unknown client tool: x. Client tools in this session: (none)" } }]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each<[string, () => Promise<CallOutcome> | CallOutcome, RegExp]>([
    ["throws", () => { throw new Error("kaput"); }, /Tool x failed: kaput/],
    ["rejects", () => Promise.reject(new Error("nope")), /Tool x failed: nope/],
    ["rejects with a non-error", () => Promise.reject(42 as unknown as Error), /Tool x failed: unknown error/],
    ["resolves with no outcome", () => Promise.resolve(undefined as unknown as CallOutcome), /Tool x failed: it produced no result/],
  ])("treats a run that %s as tool-error", async (_label, run, message) => {
    const { table, frames, settled } = createHarness();
    table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 100, run });
    await flushMicrotasks();
    expect(settled).toHaveLength(1);
    expect(settled[0]?.outcome.kind).toBe("tool-error");
    expect(frames).toHaveLength(1);
    expect(frames[0]?.response).toMatchObject({ result: { is_error: true, content: [{ type: "text", text: expect.stringMatching(message) }] } });
  });

  it("passes a preflight outcome through (callback never invoked is run's business)", async () => {
    const { table, frames } = createHarness();
    table.request({
      requestId: "r1",
      key: callKey("t1"),
      toolName: "x",
      timeoutMs: 100,
      run: async () => ({ kind: "invalid-input", issues: [{ path: "city", message: "Required" }] }),
    });
    await flushMicrotasks();
    expect(frames[0]?.response).toMatchObject({ result: { is_error: true } });
  });

  describe("timeout", () => {
    it("nothing at deadline − 1 ms, the timeout at exactly the deadline, nothing after", () => {
      const { table, frames, settled } = createHarness();
      const tool = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "slow", timeoutMs: 1_000, run: tool.run });
      vi.advanceTimersByTime(999);
      expect(frames).toHaveLength(0);
      expect(settled).toHaveLength(0);
      expect(tool.signal?.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect(settled).toHaveLength(1);
      expect(settled[0]?.outcome).toEqual({ kind: "timeout", timeoutMs: 1_000 });
      expect(settled[0]?.durationMs).toBe(1_000);
      expect(frames).toEqual([
        {
          requestId: "r1",
          response: {
            result: {
              is_error: true,
              content: [{ type: "text", text: "Tool slow timed out after 1000 ms. It may have applied its effects: inspect state before retrying." }],
            },
          },
        },
      ]);
      expect(tool.signal?.aborted).toBe(true);
      expect(tool.signal?.reason).toBeInstanceOf(ToolCallAbortError);
      expect(tool.signal?.reason).toMatchObject({ kind: "timeout", name: "TimeoutError" });
      vi.advanceTimersByTime(60_000);
      expect(frames).toHaveLength(1);
      expect(settled).toHaveLength(1);
      expect(vi.getTimerCount()).toBe(0);
    });

    it("says a readOnly tool is safe to retry", () => {
      const { table, frames } = createHarness();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "read", timeoutMs: 5, annotations: { readOnlyHint: true }, run: deferredRun().run });
      vi.advanceTimersByTime(5);
      expect(JSON.stringify(frames[0]?.response)).toContain("It has no side effects; it is safe to retry.");
    });

    it("reports the callback's result after the timeout as late, never delivered", async () => {
      const { table, frames, settled, late } = createHarness();
      const tool = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "slow", timeoutMs: 10, run: tool.run });
      vi.advanceTimersByTime(10);
      tool.resolve(ok("too late"));
      await flushMicrotasks();
      expect(frames).toHaveLength(1);
      expect(settled).toHaveLength(1);
      expect(late).toEqual([{ key: callKey("t1"), toolName: "slow", outcome: ok("too late") }]);
    });

    it("clamps a negative or NaN deadline to 0 and an enormous one to the timer maximum", () => {
      const { table, settled } = createHarness();
      table.request({ requestId: "r1", key: callKey("neg"), toolName: "x", timeoutMs: -5, run: deferredRun().run });
      table.request({ requestId: "r2", key: callKey("nan"), toolName: "x", timeoutMs: Number.NaN, run: deferredRun().run });
      table.request({ requestId: "r3", key: callKey("inf"), toolName: "x", timeoutMs: Number.POSITIVE_INFINITY, run: deferredRun().run });
      vi.advanceTimersByTime(0);
      expect(settled.map((event) => event.outcome)).toEqual([
        { kind: "timeout", timeoutMs: 0 },
        { kind: "timeout", timeoutMs: 0 },
      ]);
      table.close();
      expect(settled[2]?.outcome.kind).toBe("cancelled");
    });
  });

  describe("cancel", () => {
    it("settles matching running calls as cancelled now, with the response sent", () => {
      const { table, frames, settled } = createHarness();
      const first = deferredRun();
      const second = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1", { conversationId: "A" }), toolName: "x", timeoutMs: 1_000, run: first.run });
      table.request({ requestId: "r2", key: callKey("t2", { conversationId: "B" }), toolName: "x", timeoutMs: 1_000, run: second.run });
      expect(table.cancel((key) => key.conversationId === "A", "the turn was aborted")).toBe(1);
      expect(frames).toEqual([{ requestId: "r1", response: { error: "Tool call cancelled: the turn was aborted" } }]);
      expect(settled[0]?.outcome).toEqual({ kind: "cancelled", reason: "the turn was aborted" });
      expect(first.signal?.reason).toMatchObject({ kind: "cancelled", name: "AbortError" });
      expect(second.signal?.aborted).toBe(false);
      expect(table.pendingCount).toBe(1);
      expect(vi.getTimerCount()).toBe(1);
      expect(table.cancel(() => true, "again")).toBe(1);
      expect(table.cancel(() => true, "nothing left")).toBe(0);
    });
  });

  describe("caller signal", () => {
    it("cancels with the caller's reason passed through unchanged", () => {
      const { table, frames, settled } = createHarness();
      const caller = new AbortController();
      const tool = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, signal: caller.signal, run: tool.run });
      const reason = new Error("user pressed stop");
      caller.abort(reason);
      expect(tool.signal?.reason).toBe(reason);
      expect(settled[0]?.outcome).toEqual({ kind: "cancelled", reason: "user pressed stop" });
      expect(frames).toEqual([{ requestId: "r1", response: { error: "Tool call cancelled: user pressed stop" } }]);
      expect(vi.getTimerCount()).toBe(0);
    });

    it("passes a non-error reason through too", () => {
      const { table } = createHarness();
      const caller = new AbortController();
      const tool = deferredRun();
      const reason = { why: "custom" };
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, signal: caller.signal, run: tool.run });
      caller.abort(reason);
      expect(tool.signal?.reason).toBe(reason);
    });

    it("does not run at all when the caller's signal already fired", () => {
      const { table, frames, settled } = createHarness();
      const tool = deferredRun();
      expect(
        table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, signal: AbortSignal.abort("gone"), run: tool.run }),
      ).toBe("started");
      expect(tool.calls).toBe(0);
      expect(settled[0]?.outcome).toEqual({ kind: "cancelled", reason: "gone" });
      expect(frames).toEqual([{ requestId: "r1", response: { error: "Tool call cancelled: gone" } }]);
      expect(vi.getTimerCount()).toBe(0);
      expect(table.pendingCount).toBe(0);
    });
  });

  describe("same-tick races: exactly one outcome", () => {
    it("resolve vs timeout: the timeout fires before the resolution is seen", async () => {
      const { table, frames, settled, late } = createHarness();
      const tool = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 100, run: tool.run });
      vi.advanceTimersByTime(99);
      tool.resolve(ok("photo finish"));
      vi.advanceTimersByTime(1);
      await flushMicrotasks();
      expect(settled.map((event) => event.outcome.kind)).toEqual(["timeout"]);
      expect(frames).toHaveLength(1);
      expect(late).toHaveLength(1);
    });

    it("resolve vs timeout: the resolution seen first wins and the deadline passes silently", async () => {
      const { table, frames, settled, late } = createHarness();
      const tool = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 100, run: tool.run });
      vi.advanceTimersByTime(99);
      tool.resolve(ok("just in time"));
      await flushMicrotasks();
      vi.advanceTimersByTime(1);
      expect(settled.map((event) => event.outcome.kind)).toEqual(["ok"]);
      expect(frames).toHaveLength(1);
      expect(late).toHaveLength(0);
    });

    it("a sync outcome at the same tick the caller aborts: one outcome", () => {
      const { table, frames, settled, late } = createHarness();
      const caller = new AbortController();
      table.request({
        requestId: "r1",
        key: callKey("t1"),
        toolName: "x",
        timeoutMs: 100,
        signal: caller.signal,
        run: () => {
          caller.abort("stop");
          return ok("done anyway");
        },
      });
      expect(settled.map((event) => event.outcome.kind)).toEqual(["cancelled"]);
      expect(frames).toHaveLength(1);
      expect(late.map((event) => event.outcome.kind)).toEqual(["ok"]);
    });

    it.each([
      ["cancel", (table: ReturnType<typeof createHarness>["table"]) => void table.cancel(() => true, "aborted"), "cancelled"],
      ["close", (table: ReturnType<typeof createHarness>["table"]) => table.close("closing"), "cancelled"],
    ])("resolve vs %s", async (_label, act, kind) => {
      const { table, frames, settled, late } = createHarness();
      const tool = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 100, run: tool.run });
      tool.resolve(ok("result"));
      act(table);
      await flushMicrotasks();
      expect(settled.map((event) => event.outcome.kind)).toEqual([kind]);
      expect(frames).toHaveLength(1);
      expect(late.map((event) => event.outcome.kind)).toEqual(["ok"]);
    });

    it("resolve vs grace expiry", async () => {
      const { table, frames, settled, late } = createHarness({ reconnectGraceMs: 50 });
      const tool = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: tool.run });
      table.linkDown();
      vi.advanceTimersByTime(49);
      tool.resolve(ok("result"));
      vi.advanceTimersByTime(1);
      await flushMicrotasks();
      expect(settled.map((event) => event.outcome.kind)).toEqual(["disconnected"]);
      expect(frames).toHaveLength(0);
      expect(late.map((event) => event.outcome.kind)).toEqual(["ok"]);
    });

    it("timeout and grace expiry due at the same instant", () => {
      const { table, settled } = createHarness({ reconnectGraceMs: 100 });
      const tool = deferredRun();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 100, run: tool.run });
      table.linkDown();
      vi.advanceTimersByTime(100);
      expect(settled).toHaveLength(1);
      expect(settled[0]?.outcome.kind).toBe("timeout");
      expect(vi.getTimerCount()).toBe(0);
    });

    it("timeout then cancel in the same tick: cancel finds nothing", () => {
      const { table, settled } = createHarness();
      table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 100, run: deferredRun().run });
      vi.advanceTimersByTime(100);
      expect(table.cancel(() => true, "late cancel")).toBe(0);
      table.close();
      expect(settled.map((event) => event.outcome.kind)).toEqual(["timeout"]);
    });
  });
});
