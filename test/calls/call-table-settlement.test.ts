import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ToolCallAbortError } from "../../packages/toolrelay/src/tools/index.js";
import { defineTool, errorResult } from "../../packages/toolrelay/src/tools/index.js";
import { createHarness, deferredTool, flushMicrotasks, instantTool, text } from "./table-harness.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("CallTable settlement", () => {
  it("runs a new call exactly once and delivers its outcome", async () => {
    const slow = deferredTool("echo");
    const h = createHarness({}, slow.tool);
    expect(h.request("r1", "t1")).toBe("started");
    expect(slow.calls).toBe(1);
    expect(h.starts).toEqual(["r1"]);
    expect(h.table.runningCount).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(500);
    slow.resolve("hello");
    await flushMicrotasks();
    expect(h.frames).toEqual([{ requestId: "r1", response: text("hello"), epoch: 1 }]);
    expect(h.settled).toHaveLength(1);
    expect(h.settled[0]).toMatchObject({ outcome: { kind: "ok" }, requestIds: ["r1"] });
    expect(h.settled[0]!.record.settledAt - h.settled[0]!.record.startedAt).toBe(500);
    expect(h.table.runningCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(h.table.counts().cached).toBe(1);
  });

  it("gives the callback its ids in the context", () => {
    const slow = deferredTool();
    const h = createHarness({}, slow.tool);
    h.request("r1", "t1", { scope: { agentId: "agent-9", conversationId: "conv-9" } });
    expect(slow.context).toMatchObject({ toolCallId: "t1", agentId: "agent-9", conversationId: "conv-9" });
    slow.context!.progress("half way");
    expect(h.progress).toEqual(["half way"]);
  });

  it("settles at once when the tool answers synchronously", () => {
    const h = createHarness({}, instantTool("x", "sync"));
    h.request("r1", "t1");
    expect(h.frames).toEqual([{ requestId: "r1", response: text("sync"), epoch: 1 }]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("answers an unknown tool without running anything, naming the session's tools", () => {
    const h = createHarness();
    h.request("r1", "t1", { tool: undefined, toolName: "ghost" });
    expect(h.frames[0]?.response).toEqual({ error: "Unknown client tool: ghost. Client tools in this session: (none)" });
    expect(h.settled[0]?.outcome.kind).toBe("unknown-tool");
  });

  it("refuses an input over maxInputBytes before validating or running it", () => {
    const slow = deferredTool("big");
    const h = createHarness({ maxInputBytes: 20 }, slow.tool);
    h.request("r1", "t1", { input: { text: "x".repeat(30) } });
    expect(slow.calls).toBe(0);
    expect(h.settled[0]?.outcome).toEqual({ kind: "input-too-large", bytes: 41, limit: 20 });
    expect(JSON.stringify(h.frames[0]?.response)).toContain("Error: the input for tool big is 41 bytes, over the limit of 20 bytes");
  });

  it("lets an input of exactly maxInputBytes through, and names an unknown tool before any size", () => {
    const h = createHarness({ maxInputBytes: 41 }, instantTool("big", "ran"));
    h.request("r1", "t1", { input: { text: "x".repeat(30) } });
    expect(h.frames[0]?.response).toEqual(text("ran"));
    h.request("r2", "t2", { tool: undefined, toolName: "ghost", input: { text: "x".repeat(300) } });
    expect(h.settled[1]?.outcome).toEqual({ kind: "unknown-tool", toolName: "ghost", available: [] });
  });

  it("refuses invalid input with each failing path; the callback never runs", () => {
    let runs = 0;
    const strict = defineTool({
      name: "place_order",
      description: "order",
      inputSchema: z.object({ city: z.string(), count: z.number().int() }),
      execute: () => void runs++,
    });
    const h = createHarness({}, strict);
    h.request("r1", "t1", { input: { city: 7 } });
    expect(runs).toBe(0);
    expect(h.starts).toEqual([]);
    const body = JSON.stringify(h.frames[0]?.response);
    expect(body).toContain("Error: invalid input for tool place_order");
    expect(body).toContain("- city:");
    expect(body).toContain("- count:");
  });

  it.each<[string, () => unknown, RegExp]>([
    [
      "throws",
      () => {
        throw new Error("kaput");
      },
      /^Error: tool x failed: kaput$/,
    ],
    ["rejects", () => Promise.reject(new Error("nope")), /^Error: tool x failed: nope$/],
    [
      "throws a string",
      () => {
        throw "boom";
      },
      /^Error: tool x failed: boom$/,
    ],
    ["returns an error result", () => errorResult("disk full"), /^Error: tool x reported an error: disk full$/],
  ])("a tool that %s is a tool-error whose text carries the failure marker", async (_label, execute, pattern) => {
    const tool = defineTool({ name: "x", description: "x", inputSchema: z.object({}), execute: execute as () => string });
    const h = createHarness({}, tool);
    h.request("r1", "t1");
    await flushMicrotasks();
    expect(h.settled[0]?.outcome.kind).toBe("tool-error");
    expect(h.frames[0]?.response).toMatchObject({
      result: { is_error: true, content: [{ type: "text", text: expect.stringMatching(pattern) }] },
    });
  });

  it("a thrown string and a returned string read differently to the model", async () => {
    const thrower = defineTool({
      name: "t",
      description: "t",
      inputSchema: z.object({}),
      execute: () => {
        throw "boom";
      },
    });
    const returner = defineTool({ name: "r", description: "r", inputSchema: z.object({}), execute: () => "boom" });
    const h = createHarness();
    h.request("r1", "c1", { tool: thrower });
    h.request("r2", "c2", { tool: returner });
    expect(h.frames.map((frame) => JSON.stringify(frame.response))).toEqual([
      JSON.stringify({ result: { content: [{ type: "text", text: "Error: tool t failed: boom" }], is_error: true } }),
      JSON.stringify(text("boom")),
    ]);
  });

  describe("timeout", () => {
    it("nothing at deadline − 1 ms, the timeout at exactly the deadline, nothing after", () => {
      const slow = deferredTool("slow", { timeoutMs: 1_000, readsSignal: true });
      const h = createHarness({}, slow.tool);
      h.request("r1", "t1");
      vi.advanceTimersByTime(999);
      expect(h.frames).toHaveLength(0);
      expect(slow.context!.signal.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect(h.settled.map((entry) => entry.outcome)).toEqual([{ kind: "timeout", timeoutMs: 1_000 }]);
      expect(h.frames[0]?.response).toEqual({
        result: {
          is_error: true,
          content: [
            {
              type: "text",
              text: "Error: tool slow timed out after 1000 ms. It may have applied its effects: inspect state before retrying.",
            },
          ],
        },
      });
      expect(slow.context!.signal.reason).toBeInstanceOf(ToolCallAbortError);
      expect(slow.context!.signal.reason).toMatchObject({ kind: "timeout", name: "TimeoutError" });
      vi.advanceTimersByTime(60_000);
      expect(h.frames).toHaveLength(1);
      expect(vi.getTimerCount()).toBe(0);
    });

    it("uses the session default when the tool has none", () => {
      const h = createHarness({ toolTimeoutMs: 250 }, deferredTool().tool);
      h.request("r1", "t1");
      vi.advanceTimersByTime(249);
      expect(h.settled).toHaveLength(0);
      vi.advanceTimersByTime(1);
      expect(h.settled[0]?.outcome).toEqual({ kind: "timeout", timeoutMs: 250 });
    });

    it.each([[{ readOnlyHint: true }], [{ idempotentHint: true }]])("says a tool with %j is safe to retry", (annotations) => {
      const h = createHarness({}, deferredTool("read", { timeoutMs: 5, annotations }).tool);
      h.request("r1", "t1");
      vi.advanceTimersByTime(5);
      expect(JSON.stringify(h.frames[0]?.response)).toContain("It has no side effects; it is safe to retry.");
    });

    it("calls that share a timeout share one timer and each expires at its own deadline", () => {
      const h = createHarness({}, deferredTool("x", { timeoutMs: 100 }).tool);
      h.request("r1", "t1");
      vi.advanceTimersByTime(40);
      h.request("r2", "t2");
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(60);
      expect(h.settled.map((entry) => entry.requestIds[0])).toEqual(["r1"]);
      vi.advanceTimersByTime(39);
      expect(h.settled).toHaveLength(1);
      vi.advanceTimersByTime(1);
      expect(h.settled.map((entry) => entry.requestIds[0])).toEqual(["r1", "r2"]);
      expect(vi.getTimerCount()).toBe(0);
    });

    it("reports the callback's result after the timeout as late, never delivered", async () => {
      const slow = deferredTool("slow", { timeoutMs: 10 });
      const h = createHarness({}, slow.tool);
      h.request("r1", "t1");
      vi.advanceTimersByTime(10);
      slow.resolve("too late");
      await flushMicrotasks();
      expect(h.frames).toHaveLength(1);
      expect(h.late).toEqual([
        { toolCallId: "t1", outcome: { kind: "ok", content: [{ type: "text", text: "too late" }], output: "too late" } },
      ]);
    });
  });

  describe("the callback's signal", () => {
    it("is created only when the tool reads it", () => {
      const slow = deferredTool();
      const h = createHarness({}, slow.tool);
      h.request("r1", "t1");
      expect(h.settled).toHaveLength(0);
      expect(h.table.runningCount).toBe(1);
      const record = (h.table as unknown as { cancel(reason: string): number }).cancel("stop");
      expect(record).toBe(1);
      // Read after the abort: already aborted, with the reason.
      expect(slow.context!.signal.aborted).toBe(true);
      expect(slow.context!.signal.reason).toMatchObject({ kind: "cancelled" });
    });

    it("is a real AbortSignal that fires listeners added before the abort", () => {
      const slow = deferredTool("x", { readsSignal: true });
      const h = createHarness({}, slow.tool);
      h.request("r1", "t1");
      let fired = 0;
      slow.context!.signal.addEventListener("abort", () => fired++);
      h.table.close("bye");
      expect(fired).toBe(1);
      expect(slow.context!.signal.reason).toMatchObject({ kind: "cancelled", message: "The tool call was cancelled: bye" });
    });

    it("is read by destructuring too; a spread copies the ids and progress but no signal (documented)", () => {
      const slow = deferredTool();
      createHarness({}, slow.tool).request("r1", "t1");
      const { signal, toolCallId, progress } = slow.context!;
      expect(signal).toBeInstanceOf(AbortSignal);
      expect(toolCallId).toBe("t1");
      expect(() => progress("detached call works")).not.toThrow();
      const copy = { ...slow.context! } as Record<string, unknown>;
      expect(copy.toolCallId).toBe("t1");
      expect("signal" in copy).toBe(false);
    });
  });

  describe("cancel and close", () => {
    it("cancel settles running calls as cancelled now, with the response written", () => {
      const slow = deferredTool("x", { readsSignal: true });
      const h = createHarness({}, slow.tool);
      h.request("r1", "t1");
      expect(h.table.cancel("the turn was aborted")).toBe(1);
      expect(h.frames).toEqual([{ requestId: "r1", response: { error: "Tool call cancelled: the turn was aborted" }, epoch: 1 }]);
      expect(slow.context!.signal.reason).toMatchObject({ kind: "cancelled", name: "AbortError" });
      expect(h.table.cancel("nothing left")).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    });

    it("close settles every running call at once and refuses new calls without running them", () => {
      const slow = deferredTool();
      const h = createHarness({}, slow.tool);
      h.request("r1", "t1");
      h.request("r2", "t2");
      h.table.close("the session was closed");
      expect(h.settled.map((entry) => entry.outcome.kind)).toEqual(["cancelled", "cancelled"]);
      expect(vi.getTimerCount()).toBe(0);
      expect(h.request("r3", "t3")).toBe("closed");
      expect(slow.calls).toBe(2);
      expect(h.frames.at(-1)).toEqual({ requestId: "r3", response: { error: "Tool call cancelled: the session was closed" }, epoch: 1 });
      expect(h.request("r1", "t1")).toBe("duplicate");
      h.table.close();
    });
  });

  describe("same-tick races: exactly one outcome", () => {
    it("resolve vs timeout: the timeout fires before the resolution is seen", async () => {
      const slow = deferredTool("x", { timeoutMs: 100 });
      const h = createHarness({}, slow.tool);
      h.request("r1", "t1");
      vi.advanceTimersByTime(99);
      slow.resolve("photo finish");
      vi.advanceTimersByTime(1);
      await flushMicrotasks();
      expect(h.settled.map((entry) => entry.outcome.kind)).toEqual(["timeout"]);
      expect(h.frames).toHaveLength(1);
      expect(h.late).toHaveLength(1);
    });

    it("resolve vs timeout: the resolution seen first wins and the deadline passes silently", async () => {
      const slow = deferredTool("x", { timeoutMs: 100 });
      const h = createHarness({}, slow.tool);
      h.request("r1", "t1");
      vi.advanceTimersByTime(99);
      slow.resolve("just in time");
      await flushMicrotasks();
      vi.advanceTimersByTime(1);
      expect(h.settled.map((entry) => entry.outcome.kind)).toEqual(["ok"]);
      expect(h.late).toHaveLength(0);
    });

    it.each([
      ["cancel", (h: ReturnType<typeof createHarness>) => void h.table.cancel("aborted")],
      ["close", (h: ReturnType<typeof createHarness>) => h.table.close("closing")],
    ])("resolve vs %s", async (_label, act) => {
      const slow = deferredTool();
      const h = createHarness({}, slow.tool);
      h.request("r1", "t1");
      slow.resolve("result");
      act(h);
      await flushMicrotasks();
      expect(h.settled.map((entry) => entry.outcome.kind)).toEqual(["cancelled"]);
      expect(h.frames).toHaveLength(1);
      expect(h.late.map((entry) => entry.outcome.kind)).toEqual(["ok"]);
    });

    it("resolve vs grace expiry", async () => {
      const slow = deferredTool();
      const h = createHarness({ reconnectGraceMs: 50 }, slow.tool);
      h.request("r1", "t1");
      h.link.up = false;
      h.table.epochEnded();
      vi.advanceTimersByTime(49);
      slow.resolve("result");
      vi.advanceTimersByTime(1);
      await flushMicrotasks();
      expect(h.settled.map((entry) => entry.outcome.kind)).toEqual(["disconnected"]);
      expect(h.frames).toHaveLength(0);
      expect(h.late.map((entry) => entry.outcome.kind)).toEqual(["ok"]);
    });

    it("timeout and grace expiry due at the same instant", () => {
      const h = createHarness({ reconnectGraceMs: 100 }, deferredTool("x", { timeoutMs: 100 }).tool);
      h.request("r1", "t1");
      h.table.epochEnded();
      vi.advanceTimersByTime(100);
      expect(h.settled.map((entry) => entry.outcome.kind)).toEqual(["timeout"]);
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});
