import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_INPUTS_PER_TOOL_CALL_ID, MAX_REQUEST_IDS_PER_CALL } from "../../packages/toolrelay/src/calls/index.js";
import { createHarness, deferredTool, flushMicrotasks, instantTool, text } from "./table-harness.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const EXPIRED = (id: string) => ({ error: `Result expired; outcome unknown: the call ${id} already ran. Inspect state before retrying.` });

describe("CallTable single flight and replay", () => {
  it("a duplicate while running joins: one run, one response per waiting request id", async () => {
    const slow = deferredTool("append_row");
    const h = createHarness({}, slow.tool);
    expect(h.request("r1", "t1")).toBe("started");
    expect(h.request("r2", "t1")).toBe("joined");
    expect(h.request("r3", "t1")).toBe("joined");
    expect(slow.calls).toBe(1);
    slow.resolve("row 1");
    await flushMicrotasks();
    expect(h.frames.map((frame) => frame.requestId)).toEqual(["r1", "r2", "r3"]);
    expect(new Set(h.frames.map((frame) => frame.response)).size).toBe(1);
    expect(h.settled[0]?.requestIds).toEqual(["r1", "r2", "r3"]);
  });

  it("a new request id for a settled call whose answer the runtime does not have yet (held) replays the very same response object, without running", () => {
    const h = createHarness({}, instantTool("x", "row 1"));
    h.link.up = false;
    h.table.epochEnded();
    h.request("r1", "t1");
    expect(h.request("r2", "t1")).toBe("replayed");
    h.link.up = true;
    h.link.epoch = 2;
    h.table.epochStarted(2, true);
    expect(h.frames.map((frame) => frame.requestId)).toEqual(["r1", "r2"]);
    expect(h.frames[1]?.response).toBe(h.frames[0]?.response);
    expect(h.settled).toHaveLength(1);
  });

  it("the same key under a new request id once the runtime has the answer is a new model request (a provider reusing call_0): it runs again", async () => {
    const counting = deferredTool("x");
    const h = createHarness({}, counting.tool);
    expect(h.request("turn-1", "call_0", { input: { path: "a.txt" } })).toBe("started");
    counting.resolve("first");
    await flushMicrotasks();
    expect(h.request("turn-2", "call_0", { input: { path: "a.txt" } })).toBe("reused");
    expect(counting.calls).toBe(2);
    counting.resolve("second");
    await flushMicrotasks();
    expect(h.frames.map((frame) => [frame.requestId, frame.response])).toEqual([
      ["turn-1", text("first")],
      ["turn-2", text("second")],
    ]);
    // Each request id re-offered on a newer epoch still gets its own call's answer, never a run.
    h.link.epoch = 2;
    expect(h.request("turn-1", "call_0", { input: { path: "a.txt" } })).toBe("resent");
    expect(h.request("turn-2", "call_0", { input: { path: "a.txt" } })).toBe("resent");
    expect(h.frames.slice(2).map((frame) => frame.response)).toEqual([text("first"), text("second")]);
    expect(counting.calls).toBe(2);
  });

  it("the same key under a new request id after a reconnect, in the same turn, is the runtime asking again for an answer it lost: replayed, not run", async () => {
    const counting = deferredTool("x");
    const h = createHarness({}, counting.tool);
    expect(h.request("r1", "call_0", { input: { n: 1 }, turn: "cm-1" })).toBe("started");
    counting.resolve("once");
    await flushMicrotasks();
    h.link.epoch = 2;
    h.table.epochStarted(2, true);
    expect(h.request("r2", "call_0", { input: { n: 1 }, turn: "cm-1" })).toBe("replayed");
    expect(h.frames.at(-1)).toEqual({ requestId: "r2", response: text("once"), epoch: 2 });
    // In the next turn the same key is a new model request, reconnect or not.
    expect(h.request("r3", "call_0", { input: { n: 1 }, turn: "cm-2" })).toBe("reused");
    expect(counting.calls).toBe(2);
    counting.resolve("twice");
    await flushMicrotasks();
  });

  it("replays errors byte for byte too (timeout), to the re-offered request id", () => {
    const slow = deferredTool("x", { timeoutMs: 5 });
    const h = createHarness({}, slow.tool);
    h.request("r1", "t1");
    vi.advanceTimersByTime(5);
    h.link.epoch = 2;
    expect(h.request("r1", "t1")).toBe("resent");
    expect(JSON.stringify(h.frames[1]?.response)).toBe(JSON.stringify(h.frames[0]?.response));
    expect(slow.calls).toBe(1);
  });

  it("the same request id again is a duplicate: nothing written, nothing run", async () => {
    const slow = deferredTool();
    const h = createHarness({}, slow.tool);
    h.request("r1", "t1");
    expect(h.request("r1", "t1")).toBe("duplicate");
    slow.resolve("x");
    await flushMicrotasks();
    expect(h.request("r1", "t1")).toBe("duplicate");
    expect(h.frames.map((frame) => frame.requestId)).toEqual(["r1"]);
  });

  it(`remembers at most ${MAX_REQUEST_IDS_PER_CALL} request ids per call`, async () => {
    const slow = deferredTool();
    const h = createHarness({}, slow.tool);
    for (let index = 0; index < MAX_REQUEST_IDS_PER_CALL + 10; index++) h.request(`r${index}`, "t1");
    slow.resolve("x");
    await flushMicrotasks();
    expect(h.settled[0]?.requestIds).toHaveLength(MAX_REQUEST_IDS_PER_CALL);
    expect(h.settled[0]?.requestIds[0]).toBe("r10");
  });
});

describe("CallTable: the link's first open", () => {
  it("an answer that settled before the link first opened (a call the relay offered while the session was connecting) is written when it opens, once", () => {
    const h = createHarness({}, instantTool("pay", "paid"));
    h.link.up = false;
    h.request("r1", "call_0");
    expect(h.frames).toEqual([]);
    h.link.up = true;
    h.table.linkOpened();
    expect(h.frames.map((frame) => [frame.requestId, frame.response])).toEqual([["r1", text("paid")]]);
    h.table.linkOpened();
    expect(h.frames).toHaveLength(1);
  });
});

describe("CallTable identity: the key binds the input", () => {
  it("the same tool call id with another input is a new call (reused), and it runs", async () => {
    let runs = 0;
    const h = createHarness({}, instantTool("x", "ran"));
    const counting = deferredTool("x");
    expect(h.request("turn-1", "call_0", { input: { path: "a.txt" }, tool: counting.tool })).toBe("started");
    counting.resolve("read a");
    await flushMicrotasks();
    expect(h.request("turn-2", "call_0", { input: { path: "b.txt" }, tool: counting.tool })).toBe("reused");
    runs = counting.calls;
    counting.resolve("read b");
    await flushMicrotasks();
    expect(runs).toBe(2);
    expect(h.frames.map((frame) => frame.response)).toEqual([text("read a"), text("read b")]);
  });

  it("the same tool call id with the same input (in any key order) while it runs is the same call", async () => {
    const slow = deferredTool("x");
    const h = createHarness({}, slow.tool);
    h.request("r1", "call_0", { input: { a: 1, b: [1, { c: 2, d: 3 }] } });
    expect(h.request("r2", "call_0", { input: { b: [1, { d: 3, c: 2 }], a: 1 } })).toBe("joined");
    slow.resolve("once");
    await flushMicrotasks();
    expect(h.settled).toHaveLength(1);
    expect(slow.calls).toBe(1);
  });

  it("a request id that already stands for one call never runs a second: answered with an error once per epoch", async () => {
    const slow = deferredTool();
    const h = createHarness({}, slow.tool);
    h.request("r1", "t1");
    expect(h.request("r1", "t2")).toBe("conflict");
    expect(slow.calls).toBe(1);
    expect(h.frames).toEqual([
      {
        requestId: "r1",
        epoch: 1,
        response: {
          error: "Refused: request r1 already stands for tool call t1; one request id cannot carry a second call. Nothing was run.",
        },
      },
    ]);
    expect(h.request("r1", "t2")).toBe("conflict");
    slow.resolve("late for r1");
    await flushMicrotasks();
    expect(h.frames).toHaveLength(1);
  });

  it(`keeps at most ${MAX_INPUTS_PER_TOOL_CALL_ID} inputs per tool call id`, () => {
    const h = createHarness({}, instantTool());
    h.link.up = false; // every answer stays held: each call is still owed to the runtime
    for (let index = 0; index < MAX_INPUTS_PER_TOOL_CALL_ID + 4; index++) h.request(`r${index}`, "call_0", { input: { n: index } });
    expect(h.request("again", "call_0", { input: { n: MAX_INPUTS_PER_TOOL_CALL_ID + 3 } })).toBe("replayed");
    expect(h.request("oldest", "call_0", { input: { n: 0 } })).toBe("reused");
  });

  it("the same ids in another connection, agent or conversation are another call", () => {
    const h = createHarness({}, instantTool());
    h.request("r1", "same");
    for (const scope of [{ connectionId: "connection-2" }, { agentId: "agent-2" }, { conversationId: "conversation-2" }]) {
      expect(h.request(`r-${JSON.stringify(scope)}`, "same", { scope })).toBe("started");
    }
    expect(h.settled).toHaveLength(4);
  });
});

describe("CallTable bounds", () => {
  it("a request id re-offered after count eviction is answered 'expired', never run again, once per epoch", () => {
    const h = createHarness({ maxCachedCalls: 1 }, instantTool());
    h.request("r1", "t1");
    h.request("r2", "t2");
    h.link.epoch = 2;
    expect(h.request("r1", "t1")).toBe("expired");
    expect(h.frames[2]).toEqual({ requestId: "r1", response: EXPIRED("t1"), epoch: 2 });
    expect(h.request("r1", "t1")).toBe("duplicate");
    expect(h.settled).toHaveLength(2);
  });

  it("a request id re-offered after age eviction is 'expired' (age checked on access)", () => {
    const h = createHarness({ cacheAgeMs: 1_000 }, instantTool());
    h.request("r1", "t1");
    vi.advanceTimersByTime(999);
    h.link.epoch = 2;
    expect(h.request("r1", "t1")).toBe("resent");
    vi.advanceTimersByTime(1);
    h.link.epoch = 3;
    expect(h.request("r1", "t1")).toBe("expired");
    expect(h.table.counts().cached).toBe(0);
    expect(h.table.counts().forgotten).toBe(1);
  });

  it("the cache is bounded in characters as well as count", () => {
    const h = createHarness({ maxCachedChars: 25 }, instantTool("x", "y".repeat(10)));
    h.request("r1", "t1");
    h.request("r2", "t2");
    expect(h.table.counts().cached).toBe(2);
    h.request("r3", "t3");
    expect(h.table.counts().cached).toBe(2);
    h.link.epoch = 2;
    expect(h.request("r1", "t1")).toBe("expired");
  });

  it("past maxForgottenCalls (or forgottenAgeMs) a call is gone: a new request starts it again (the documented bound)", () => {
    const h = createHarness({ maxCachedCalls: 1, maxForgottenCalls: 1 }, instantTool());
    for (const id of ["t1", "t2", "t3"]) h.request(`r-${id}`, id);
    expect(h.table.counts().forgotten).toBe(1);
    expect(h.request("again", "t1")).toBe("started");
    const aged = createHarness({ maxCachedCalls: 1, forgottenAgeMs: 5_000 }, instantTool());
    aged.request("r1", "t1");
    aged.request("r2", "t2");
    vi.advanceTimersByTime(5_000);
    expect(aged.request("again", "t1")).toBe("started");
  });

  it("maxConcurrentCalls: past it a call is answered busy, never run, and that is its one outcome", () => {
    const slow = deferredTool();
    const h = createHarness({ maxConcurrentCalls: 2 }, slow.tool);
    h.request("r1", "t1");
    h.request("r2", "t2");
    expect(h.request("r3", "t3")).toBe("busy");
    expect(slow.calls).toBe(2);
    expect(h.frames).toEqual([
      {
        requestId: "r3",
        epoch: 1,
        response: { error: "Tool x was not run: the client is already running 2 tool calls. Try again later." },
      },
    ]);
    h.link.epoch = 2;
    expect(h.request("r3", "t3")).toBe("resent"); // the same request re-offered: the same busy answer, not a run
    expect(h.request("r4", "t3")).toBe("busy"); // a new model request: still past the limit
    expect(slow.calls).toBe(2);
  });

  it("held answers are bounded in characters: past maxHeldChars a held result becomes a short error", async () => {
    const big = deferredTool("big");
    const h = createHarness({ maxHeldChars: 15 }, big.tool);
    h.request("r1", "t1");
    h.request("r2", "t2");
    h.link.up = false;
    h.table.epochEnded();
    big.resolve("z".repeat(10));
    await flushMicrotasks();
    expect(h.table.counts().held).toBe(2);
    h.link.up = true;
    h.link.epoch = 2;
    h.table.epochStarted(2, true);
    expect(h.frames.map((frame) => frame.response)).toEqual([
      text("z".repeat(10)),
      { error: "The result of tool big (ok) was too large to keep while the client was disconnected. Inspect state before retrying." },
    ]);
  });
});

describe("CallTable epochs", () => {
  it("holds answers while writes fail and writes them once, for their original request ids, when the runtime kept them", async () => {
    const slow = deferredTool();
    const h = createHarness({}, slow.tool);
    h.request("r1", "t1");
    h.request("r2", "t1");
    h.link.up = false;
    h.table.epochEnded();
    slow.resolve("x");
    await flushMicrotasks();
    expect(h.table.counts().held).toBe(2);
    h.link = Object.assign(h.link, { up: true, epoch: 2 });
    h.table.epochStarted(2, true);
    expect(h.frames.map((frame) => [frame.requestId, frame.epoch])).toEqual([
      ["r1", 2],
      ["r2", 2],
    ]);
    h.table.epochEnded();
    h.table.epochStarted(3, true);
    expect(h.frames).toHaveLength(4); // written on epoch 2 just before epoch 2 ended: written again (the re-send window)
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a held answer's request id asked again while the link is up is written at once", () => {
    const h = createHarness({}, instantTool());
    h.link.up = false;
    h.request("r1", "t1");
    expect(h.table.counts().held).toBe(1);
    h.link.up = true;
    expect(h.request("r1", "t1")).toBe("resent");
    expect(h.frames.map((frame) => frame.requestId)).toEqual(["r1"]);
    expect(h.table.counts().held).toBe(0);
  });

  it("an answer written on an older epoch and re-offered on a newer one gets the cached answer again (one per epoch)", () => {
    const h = createHarness({ resendWindowMs: 0 }, instantTool("x", "answer"));
    h.request("r1", "t1");
    h.table.epochEnded();
    h.link.epoch = 2;
    h.table.epochStarted(2, true);
    expect(h.frames).toHaveLength(1);
    expect(h.request("r1", "t1", { epoch: 2 })).toBe("resent");
    expect(h.request("r1", "t1", { epoch: 2 })).toBe("duplicate");
    expect(h.frames.map((frame) => [frame.requestId, frame.epoch])).toEqual([
      ["r1", 1],
      ["r1", 2],
    ]);
    expect(h.frames[1]?.response).toBe(h.frames[0]?.response);
    expect(h.settled).toHaveLength(1);
  });

  it("after a reconnect that kept the calls, answers written within resendWindowMs before the loss are written again; older ones are not", () => {
    const h = createHarness({ resendWindowMs: 1_000 }, instantTool());
    h.request("old", "t1");
    vi.advanceTimersByTime(5_000);
    h.request("recent", "t2");
    vi.advanceTimersByTime(500);
    h.table.epochEnded();
    h.link.epoch = 2;
    h.table.epochStarted(2, true);
    expect(h.frames.map((frame) => [frame.requestId, frame.epoch])).toEqual([
      ["old", 1],
      ["recent", 1],
      ["recent", 2],
    ]);
  });

  it("when the runtime forgot the old epoch (local), held answers are dropped and orphaned calls settle disconnected", async () => {
    const slow = deferredTool("x", { readsSignal: true });
    const h = createHarness({}, slow.tool);
    h.link.up = false;
    h.request("held", "t0", { tool: instantTool() });
    h.link.up = true;
    h.request("running", "t1");
    h.table.epochEnded();
    h.link.epoch = 2;
    h.table.epochStarted(2, false);
    expect(h.table.counts().held).toBe(0);
    expect(h.settled.map((entry) => [entry.requestIds[0], entry.outcome.kind])).toEqual([
      ["held", "ok"],
      ["running", "disconnected"],
    ]);
    expect(slow.context!.signal.reason).toMatchObject({ kind: "disconnected" });
    expect(h.frames).toHaveLength(0);
    expect(h.request("new", "t2", { epoch: 2, tool: instantTool() })).toBe("started");
    expect(h.frames.map((frame) => frame.requestId)).toEqual(["new"]);
    await flushMicrotasks();
  });

  it("a link that stays down past the grace window settles running calls disconnected; the answer goes out when a keeping runtime is back", () => {
    const slow = deferredTool();
    const h = createHarness({ reconnectGraceMs: 100 }, slow.tool);
    h.request("r1", "t1");
    h.link.up = false;
    h.table.epochEnded();
    vi.advanceTimersByTime(100);
    expect(h.settled.map((entry) => entry.outcome)).toEqual([{ kind: "disconnected", graceMs: 100 }]);
    h.link.up = true;
    h.link.epoch = 2;
    h.table.epochStarted(2, true);
    expect(h.frames).toEqual([
      {
        requestId: "r1",
        epoch: 2,
        response: { error: "Tool x was interrupted when the client lost its connection; outcome unknown: inspect state before retrying." },
      },
    ]);
  });

  it("a link back within the grace window stops it; calls run on to their own outcome", async () => {
    const slow = deferredTool();
    const h = createHarness({ reconnectGraceMs: 100 }, slow.tool);
    h.request("r1", "t1");
    h.table.epochEnded();
    vi.advanceTimersByTime(99);
    h.link.epoch = 2;
    h.table.epochStarted(2, true);
    vi.advanceTimersByTime(1_000);
    expect(h.settled).toHaveLength(0);
    slow.resolve("fine");
    await flushMicrotasks();
    expect(h.frames).toEqual([{ requestId: "r1", epoch: 2, response: text("fine") }]);
  });

  it("close while the link is down drops held answers (nothing can be written any more)", () => {
    const h = createHarness({}, instantTool());
    h.link.up = false;
    h.request("r1", "t1");
    h.table.close();
    expect(h.table.counts().held).toBe(0);
    h.link.up = true;
    h.table.epochStarted(2, true);
    expect(h.frames).toHaveLength(0);
  });
});
