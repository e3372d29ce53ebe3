/**
 * `ctx.idempotencyKey` (issue 26): `tr1_` + SHA-256 of (agent, conversation, tool call id, the
 * request id the call FIRST arrived with). Stable across every re-delivery of one call (the same
 * request id again, a new request id that joins it, a replay), even after the record let that
 * first request id go; new for a new model request that reuses the tool call id; derived again,
 * equal, by another table (another process) that meets the same first request.
 */
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { idempotencyKeyOf, MAX_REQUEST_IDS_PER_CALL } from "../../packages/toolrelay/src/calls/index.js";
import { z } from "zod";
import { defineTool } from "../../packages/toolrelay/src/tools/index.js";
import { createHarness, deferredTool, flushMicrotasks } from "./table-harness.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("idempotencyKeyOf", () => {
  it("is tr1_ and the base64url SHA-256 of the four parts as a JSON array", () => {
    const key = idempotencyKeyOf("agent-1", "conversation-1", "call_0", "external-tool-1");
    const digest = createHash("sha256")
      .update(JSON.stringify(["agent-1", "conversation-1", "call_0", "external-tool-1"]))
      .digest("base64url");
    expect(key).toBe(`tr1_${digest}`);
    expect(key).toMatch(/^tr1_[A-Za-z0-9_-]{43}$/);
    expect(idempotencyKeyOf("agent-1", "conversation-1", "call_0", "external-tool-1")).toBe(key);
  });

  it("changes with each part, and parts cannot run into each other", () => {
    const base = ["agent-1", "conversation-1", "call_0", "external-tool-1"] as const;
    const keys = new Set([idempotencyKeyOf(...base)]);
    for (let index = 0; index < base.length; index++) {
      const changed = [...base] as [string, string, string, string];
      changed[index] = `${changed[index]}x`;
      keys.add(idempotencyKeyOf(...changed));
    }
    expect(keys.size).toBe(5);
    expect(idempotencyKeyOf("a", "b:c", "d", "e")).not.toBe(idempotencyKeyOf("a:b", "c", "d", "e"));
    expect(idempotencyKeyOf("a", "b", "c", "")).not.toBe(idempotencyKeyOf("a", "b", "", "c"));
  });
});

describe("the key a call's tool sees", () => {
  it("is idempotencyKeyOf the call's scope and first request id", () => {
    const slow = deferredTool("book");
    const h = createHarness({}, slow.tool);
    h.request("external-tool-1", "call_0", { scope: { agentId: "agent-7", conversationId: "conv-7" } });
    expect(readKey(slow)).toBe(idempotencyKeyOf("agent-7", "conv-7", "call_0", "external-tool-1"));
  });

  it("is the same for every re-delivery: the same request id again, a new request id that joins, a re-offer after a reconnect, a replay", async () => {
    const slow = deferredTool("book");
    const h = createHarness({}, slow.tool);
    h.request("r1", "call_0");
    const key = readKey(slow);
    expect(h.request("r1", "call_0")).toBe("duplicate");
    expect(h.request("r2", "call_0")).toBe("joined");
    h.table.epochEnded();
    h.link.epoch = 2;
    h.table.epochStarted(2, true);
    expect(h.request("r1", "call_0", { epoch: 2 })).toBe("duplicate");
    expect(slow.calls).toBe(1);
    expect(readKey(slow)).toBe(key);
    slow.resolve("booked");
    await flushMicrotasks();
    expect(h.request("r3", "call_0", { epoch: 3 })).toBe("replayed");
    expect(slow.calls).toBe(1);
    expect(h.settled.map((entry) => entry.record.idempotencyKey)).toEqual([key]);
  });

  it("keeps the first request id's key after the record let that id go (more re-deliveries than it keeps), also when first read late", async () => {
    const slow = deferredTool("book");
    const h = createHarness({}, slow.tool);
    h.request("first", "call_0");
    for (let index = 0; index < MAX_REQUEST_IDS_PER_CALL + 5; index++) h.request(`again-${index}`, "call_0");
    expect(h.table.runningCount).toBe(1);
    // Read only now: computed from the seed the record kept, not from its (trimmed) deliveries.
    expect(readKey(slow)).toBe(idempotencyKeyOf("agent-1", "conversation-1", "call_0", "first"));
    expect(slow.calls).toBe(1);
    slow.resolve("booked");
    await flushMicrotasks();
    expect(h.settled[0]!.requestIds).toHaveLength(MAX_REQUEST_IDS_PER_CALL);
    expect(h.settled[0]!.requestIds).not.toContain("first");
    expect(h.settled[0]!.record.idempotencyKey).toBe(idempotencyKeyOf("agent-1", "conversation-1", "call_0", "first"));
  });

  it("is new for a new model request that reuses call_0 (a new request id after the answer), with the same input too", () => {
    const keys: string[] = [];
    const book = defineTool({
      name: "book",
      description: "Books",
      inputSchema: z.object({ seat: z.string() }),
      execute: (_input, context) => {
        keys.push(context.idempotencyKey);
        return "booked";
      },
    });
    const h = createHarness({}, book);
    for (const [index, requestId] of ["r1", "r2", "r3"].entries()) {
      expect(h.request(requestId, "call_0", { input: { seat: "12A" }, turn: `turn-${index}` })).toBe(index === 0 ? "started" : "reused");
    }
    expect(keys).toEqual(["r1", "r2", "r3"].map((requestId) => idempotencyKeyOf("agent-1", "conversation-1", "call_0", requestId)));
    expect(new Set(keys).size).toBe(3);
  });

  it("is derived again, equal, by another table (another process) that meets the same first request", () => {
    const first = deferredTool("book");
    const second = deferredTool("book");
    createHarness({}, first.tool).request("external-tool-9", "call_0");
    createHarness({}, second.tool).request("external-tool-9", "call_0");
    expect(readKey(second)).toBe(readKey(first));
  });
});

function readKey(tool: ReturnType<typeof deferredTool>): string {
  const context = tool.context as unknown as { idempotencyKey: string } | undefined;
  if (context === undefined) throw new Error("the tool has not run");
  return context.idempotencyKey;
}
