import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_REQUEST_IDS_PER_CALL, type CallKey } from "../../src/calls/index.js";
import { replayScenario, scopeIsolationScenario } from "./scenarios.js";
import { callKey, createHarness, deferredRun, flushMicrotasks, ok } from "./table-harness.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const request = (requestId: string, key: CallKey, run: (signal: AbortSignal) => ReturnType<ReturnType<typeof deferredRun>["run"]> | ReturnType<typeof ok>) => ({
  requestId,
  key,
  toolName: "append_row",
  timeoutMs: 10_000,
  run,
});

describe("CallTable single flight and replay", () => {
  it("a duplicate while running joins: one run, one response per waiting request id", async () => {
    const { table, frames, settled } = createHarness();
    const tool = deferredRun();
    expect(table.request(request("r1", callKey("t1"), tool.run))).toBe("started");
    expect(table.request(request("r2", callKey("t1"), tool.run))).toBe("joined");
    expect(table.request(request("r3", callKey("t1"), tool.run))).toBe("joined");
    expect(tool.calls).toBe(1);
    expect(table.pendingCount).toBe(1);
    tool.resolve(ok("row 1"));
    await flushMicrotasks();
    expect(frames.map((frame) => frame.requestId)).toEqual(["r1", "r2", "r3"]);
    expect(new Set(frames.map((frame) => frame.response)).size).toBe(1);
    expect(settled).toHaveLength(1);
    expect(settled[0]?.requestIds).toEqual(["r1", "r2", "r3"]);
  });

  it("a duplicate after settlement replays the very same response object at once, without running", replayScenario);

  it("replays errors byte for byte too (timeout)", () => {
    const { table, frames } = createHarness();
    const tool = deferredRun();
    table.request({ ...request("r1", callKey("t1"), tool.run), timeoutMs: 5 });
    vi.advanceTimersByTime(5);
    expect(table.request(request("r2", callKey("t1"), tool.run))).toBe("replayed");
    expect(JSON.stringify(frames[1]?.response)).toBe(JSON.stringify(frames[0]?.response));
    expect(tool.calls).toBe(1);
  });

  it("a duplicate after eviction is answered 'expired', never run again", async () => {
    const { table, frames } = createHarness({ replay: { maxEntries: 1 } });
    const first = deferredRun();
    table.request(request("r1", callKey("t1"), () => ok("one")));
    table.request(request("r2", callKey("t2"), () => ok("two")));
    expect(table.request(request("r3", callKey("t1"), first.run))).toBe("expired");
    expect(first.calls).toBe(0);
    expect(frames[2]).toEqual({
      requestId: "r3",
      response: { error: "Result expired; outcome unknown: the call t1 already ran. Inspect state before retrying." },
    });
  });

  it("a duplicate after age eviction is 'expired' (cache age checked on access)", () => {
    const { table } = createHarness({ replay: { maxAgeMs: 1_000 } });
    table.request(request("r1", callKey("t1"), () => ok("one")));
    vi.advanceTimersByTime(999);
    expect(table.request(request("r2", callKey("t1"), () => ok("again")))).toBe("replayed");
    vi.advanceTimersByTime(1);
    expect(table.request(request("r3", callKey("t1"), () => ok("again")))).toBe("expired");
    expect(table.cachedCount).toBe(0);
  });

  it("an 'expired' answer is given once per request id", () => {
    const { table, frames } = createHarness({ replay: { maxEntries: 1 } });
    table.request(request("r1", callKey("t1"), () => ok("one")));
    table.request(request("r2", callKey("t2"), () => ok("two")));
    expect(table.request(request("r3", callKey("t1"), () => ok("one")))).toBe("expired");
    expect(table.request(request("r3", callKey("t1"), () => ok("one")))).toBe("duplicate");
    expect(frames.map((frame) => frame.requestId)).toEqual(["r1", "r2", "r3"]);
  });

  it("the same request id after eviction gets no second frame", () => {
    const { table, frames } = createHarness({ replay: { maxEntries: 1 } });
    table.request(request("r1", callKey("t1"), () => ok("one")));
    table.request(request("r2", callKey("t2"), () => ok("two")));
    expect(table.request(request("r1", callKey("t1"), () => ok("one")))).toBe("duplicate");
    expect(frames.map((frame) => frame.requestId)).toEqual(["r1", "r2"]);
  });

  it("past the tombstones too, the key is new again (documented bound)", () => {
    const { table } = createHarness({ replay: { maxEntries: 1, maxTombstones: 1 } });
    for (const id of ["t1", "t2", "t3"]) table.request(request(`r-${id}`, callKey(id), () => ok(id)));
    expect(table.request(request("again", callKey("t1"), () => ok("t1")))).toBe("started");
  });

  describe("the same request id again (at most one frame per request id)", () => {
    it("is ignored while its call runs", async () => {
      const { table, frames } = createHarness();
      const tool = deferredRun();
      table.request(request("r1", callKey("t1"), tool.run));
      expect(table.request(request("r1", callKey("t1"), tool.run))).toBe("duplicate");
      tool.resolve(ok("x"));
      await flushMicrotasks();
      expect(frames.map((frame) => frame.requestId)).toEqual(["r1"]);
    });

    it("is ignored once its response was written", () => {
      const { table, frames } = createHarness();
      table.request(request("r1", callKey("t1"), () => ok("x")));
      expect(table.request(request("r1", callKey("t1"), () => ok("x")))).toBe("duplicate");
      table.request(request("r2", callKey("t1"), () => ok("x")));
      expect(table.request(request("r2", callKey("t1"), () => ok("x")))).toBe("duplicate");
      expect(frames.map((frame) => frame.requestId)).toEqual(["r1", "r2"]);
    });

    it("is answered from the cache when the earlier delivery failed (a redelivery, once)", () => {
      const { table, frames, link } = createHarness();
      link.up = false;
      table.request(request("r1", callKey("t1"), () => ok("x")));
      expect(frames).toHaveLength(0);
      expect(table.heldCount).toBe(1);
      link.up = true;
      expect(table.request(request("r1", callKey("t1"), () => ok("x")))).toBe("replayed");
      expect(frames.map((frame) => frame.requestId)).toEqual(["r1"]);
      expect(table.heldCount).toBe(0);
      table.linkUp({ redeliver: true });
      expect(table.request(request("r1", callKey("t1"), () => ok("x")))).toBe("duplicate");
      expect(frames).toHaveLength(1);
    });
  });

  it("remembers at most MAX_REQUEST_IDS_PER_CALL request ids per call", async () => {
    const { table, settled } = createHarness();
    const tool = deferredRun();
    for (let index = 0; index < MAX_REQUEST_IDS_PER_CALL + 10; index++) table.request(request(`r${index}`, callKey("t1"), tool.run));
    tool.resolve(ok("x"));
    await flushMicrotasks();
    expect(settled[0]?.requestIds).toHaveLength(MAX_REQUEST_IDS_PER_CALL);
    expect(settled[0]?.requestIds[0]).toBe("r10");
  });
});

describe("CallTable scope isolation", () => {
  it.each<[string, Partial<CallKey>]>([
    ["connections", { connectionId: "connection-2" }],
    ["agents", { agentId: "agent-2" }],
    ["conversations", { conversationId: "conversation-2" }],
  ])("the same tool call id in two %s are two calls", async (_label, scope) => scopeIsolationScenario(scope));
});

describe("CallTable link loss", () => {
  it("holds responses while the link is down and redelivers them once for their original request ids", async () => {
    const { table, frames, attempts } = createHarness();
    const tool = deferredRun();
    table.request(request("r1", callKey("t1"), tool.run));
    table.request(request("r2", callKey("t1"), tool.run));
    table.linkDown();
    tool.resolve(ok("x"));
    await flushMicrotasks();
    expect(attempts).toHaveLength(0); // the table knows the link is down: it does not even try
    expect(table.heldCount).toBe(2);
    table.linkUp({ redeliver: true });
    expect(frames.map((frame) => frame.requestId)).toEqual(["r1", "r2"]);
    expect(table.heldCount).toBe(0);
    table.linkDown();
    table.linkUp({ redeliver: true });
    expect(frames).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("holds a response whose deliver returned false, even before linkDown", () => {
    const { table, frames, link } = createHarness();
    link.up = false;
    table.request(request("r1", callKey("t1"), () => ok("x")));
    expect(table.heldCount).toBe(1);
    link.up = true;
    table.linkDown();
    table.linkUp({ redeliver: true });
    expect(frames.map((frame) => frame.requestId)).toEqual(["r1"]);
  });

  it("keeps a response held when the redelivery fails again", () => {
    const { table, frames, link } = createHarness();
    table.linkDown();
    table.request(request("r1", callKey("t1"), () => ok("x")));
    link.up = false;
    table.linkUp({ redeliver: true });
    expect(table.heldCount).toBe(1);
    link.up = true;
    table.linkUp({ redeliver: true });
    expect(frames).toHaveLength(1);
  });

  it("drops held responses without redeliver; the outcome stays cached for a re-request", () => {
    const { table, frames } = createHarness();
    const tool = deferredRun();
    table.linkDown();
    table.request(request("r1", callKey("t1"), () => ok("x")));
    expect(table.heldCount).toBe(1);
    table.linkUp({ redeliver: false });
    expect(frames).toHaveLength(0);
    expect(table.heldCount).toBe(0);
    expect(table.cachedCount).toBe(1);
    expect(table.request(request("r2", callKey("t1"), tool.run))).toBe("replayed");
    expect(tool.calls).toBe(0);
    expect(frames.map((frame) => frame.requestId)).toEqual(["r2"]);
  });

  it("without redeliver, running calls stop answering the forgotten request ids but answer new ones", async () => {
    const { table, frames, settled } = createHarness();
    const tool = deferredRun();
    table.request(request("r1", callKey("t1"), tool.run));
    table.linkDown();
    table.linkUp({ redeliver: false });
    expect(table.request(request("r2", callKey("t1"), tool.run))).toBe("joined");
    tool.resolve(ok("x"));
    await flushMicrotasks();
    expect(frames.map((frame) => frame.requestId)).toEqual(["r2"]);
    expect(settled[0]?.requestIds).toEqual(["r1", "r2"]);
    expect(tool.calls).toBe(1);
  });

  it("running calls survive a reconnect inside the grace window", async () => {
    const { table, frames, settled } = createHarness({ reconnectGraceMs: 1_000 });
    const tool = deferredRun();
    table.request(request("r1", callKey("t1"), tool.run));
    table.linkDown();
    vi.advanceTimersByTime(999);
    table.linkUp({ redeliver: true });
    vi.advanceTimersByTime(5_000);
    expect(settled).toHaveLength(0);
    tool.resolve(ok("x"));
    await flushMicrotasks();
    expect(frames.map((frame) => frame.requestId)).toEqual(["r1"]);
    expect(tool.signal?.aborted).toBe(false);
  });

  it("grace expiry settles running calls as disconnected: signal aborted, the original request gets 'outcome unknown' when the link returns with redelivery, a re-request replays it", () => {
    const { table, frames, attempts, settled } = createHarness({ reconnectGraceMs: 30_000 });
    const tool = deferredRun();
    table.request({ ...request("r1", callKey("t1"), tool.run), timeoutMs: 60_000 });
    table.linkDown();
    expect(vi.getTimerCount()).toBe(2);
    vi.advanceTimersByTime(29_999);
    expect(settled).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(settled.map((event) => event.outcome)).toEqual([{ kind: "disconnected", graceMs: 30_000 }]);
    expect(tool.signal?.reason).toMatchObject({ kind: "disconnected", name: "AbortError" });
    expect(attempts).toHaveLength(0);
    expect(table.heldCount).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
    const unknown = {
      error: "Tool append_row was interrupted when the client lost its connection; outcome unknown: inspect state before retrying.",
    };
    table.linkUp({ redeliver: true });
    expect(frames).toEqual([{ requestId: "r1", response: unknown }]);
    expect(table.request(request("r2", callKey("t1"), tool.run))).toBe("replayed");
    expect(tool.calls).toBe(1);
    expect(frames).toEqual([
      { requestId: "r1", response: unknown },
      { requestId: "r2", response: unknown },
    ]);
  });

  it("a disconnected outcome is dropped for the original request when the link returns without redelivery (local app-server)", () => {
    const { table, frames } = createHarness({ reconnectGraceMs: 100 });
    const tool = deferredRun();
    table.request(request("r1", callKey("t1"), tool.run));
    table.linkDown();
    vi.advanceTimersByTime(100);
    table.linkUp({ redeliver: false });
    expect(frames).toHaveLength(0);
    expect(table.heldCount).toBe(0);
  });

  it("uses one grace timer for the whole table, started by the first linkDown", () => {
    const { table, settled } = createHarness({ reconnectGraceMs: 100 });
    for (const id of ["a", "b", "c"]) table.request(request(id, callKey(id), deferredRun().run));
    expect(vi.getTimerCount()).toBe(3);
    table.linkDown();
    vi.advanceTimersByTime(60);
    table.linkDown();
    expect(vi.getTimerCount()).toBe(4);
    vi.advanceTimersByTime(40);
    expect(settled.map((event) => event.outcome.kind)).toEqual(["disconnected", "disconnected", "disconnected"]);
  });

  it("keeps responses held past cache eviction (they are owed), bounded by the tombstone cap", () => {
    const { table, frames } = createHarness({ replay: { maxEntries: 3, maxTombstones: 5 } });
    table.linkDown();
    for (let index = 0; index < 10; index++) table.request(request(`r${index}`, callKey(`t${index}`), () => ok("x")));
    expect(table.cachedCount).toBe(3);
    // 3 in the cache + at most max(maxTombstones, maxEntries) = 5 evicted ones still owed.
    expect(table.heldCount).toBe(8);
    table.linkUp({ redeliver: true });
    expect(frames.map((frame) => frame.requestId)).toEqual(["r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"]);
    expect(table.heldCount).toBe(0);
  });

  it("an 'expired' answer is not held while the link is down", () => {
    const { table, attempts } = createHarness({ replay: { maxEntries: 1 } });
    table.request(request("r1", callKey("t1"), () => ok("x")));
    table.request(request("r2", callKey("t2"), () => ok("x")));
    table.linkDown();
    expect(table.request(request("r3", callKey("t1"), () => ok("x")))).toBe("expired");
    expect(attempts).toHaveLength(2);
  });

  it("refuses an invalid grace window", () => {
    for (const reconnectGraceMs of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createHarness({ reconnectGraceMs })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    }
  });
});

describe("CallTable callbacks", () => {
  it("a throwing deliver counts as not written (held) and is reported; the table carries on", () => {
    const errors: unknown[] = [];
    let fail = true;
    const { table, settled } = createHarness({
      deliver: () => {
        if (fail) throw new Error("encode failed");
        return true;
      },
      onCallbackError: (error) => errors.push(error),
    });
    table.request(request("r1", callKey("t1"), () => ok("x")));
    expect(errors).toHaveLength(1);
    expect(settled).toHaveLength(1);
    expect(table.heldCount).toBe(1);
    fail = false;
    table.linkUp({ redeliver: true });
    expect(table.heldCount).toBe(0);
  });

  it("throwing onSettled / onLate never break settlement or escape", async () => {
    const errors: unknown[] = [];
    const { table, frames } = createHarness({
      onSettled: () => {
        throw new Error("listener bug");
      },
      onLate: () => {
        throw new Error("late listener bug");
      },
      onCallbackError: (error) => errors.push(error),
    });
    const tool = deferredRun();
    table.request({ ...request("r1", callKey("t1"), tool.run), timeoutMs: 10 });
    vi.advanceTimersByTime(10);
    tool.resolve(ok("late"));
    await flushMicrotasks();
    expect(frames).toHaveLength(1);
    expect(errors.map((error) => (error as Error).message)).toEqual(["listener bug", "late listener bug"]);
    expect(table.pendingCount).toBe(0);
  });
});
