/**
 * The bound of records per tool call id (`MAX_INPUTS_PER_TOOL_CALL_ID`, `CallStore.add`), held by
 * the mutants of it that survived `npm run mutate` (docs/reliability.md, "Mutation testing"): the
 * bound counts distinct inputs, not reuses of one; it keeps exactly that many; and it never lets go
 * of a call that is still running (its request ids would stop standing for it, and a re-delivery
 * would run it a second time).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_INPUTS_PER_TOOL_CALL_ID } from "../../packages/toolrelay/src/calls/index.js";
import { createHarness, deferredTool, instantTool } from "./table-harness.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe(`at most ${MAX_INPUTS_PER_TOOL_CALL_ID} inputs per tool call id`, () => {
  it(`a running call is not let go of when it is the one past the bound (${MAX_INPUTS_PER_TOOL_CALL_ID} inputs after it): its re-delivery and its re-attempt join it`, () => {
    const running = deferredTool("x");
    const h = createHarness({}, instantTool("x"));
    expect(h.request("r-running", "call_0", { tool: running.tool, input: { n: "running" } })).toBe("started");
    for (let index = 0; index < MAX_INPUTS_PER_TOOL_CALL_ID; index++) {
      expect(h.request(`r${index}`, "call_0", { input: { n: index } })).toBe("reused");
    }
    expect(h.request("r-running", "call_0", { tool: running.tool, input: { n: "running" } })).toBe("duplicate");
    expect(h.request("r-running-again", "call_0", { tool: running.tool, input: { n: "running" } })).toBe("joined");
    expect(running.calls).toBe(1);
    running.resolve("done");
  });

  // Found by the mutation run (packages/toolrelay/src/calls/call-store.ts `add`): the cut checked only the first record
  // past the bound, so a running record older than a settled one past it was cut with it, and its
  // re-delivery ran the tool a second time (P2). `add` now keeps running records wherever they are.
  it(`nor when it is older than that (${MAX_INPUTS_PER_TOOL_CALL_ID} + 2 inputs after it)`, () => {
    const running = deferredTool("x");
    const h = createHarness({}, instantTool("x"));
    expect(h.request("r-running", "call_0", { tool: running.tool, input: { n: "running" } })).toBe("started");
    for (let index = 0; index < MAX_INPUTS_PER_TOOL_CALL_ID + 2; index++) {
      expect(h.request(`r${index}`, "call_0", { input: { n: index } })).toBe("reused");
    }
    h.request("r-running", "call_0", { tool: running.tool, input: { n: "running" } });
    try {
      expect(running.calls).toBe(1);
    } finally {
      running.resolve("done");
    }
  });

  it(`keeps exactly ${MAX_INPUTS_PER_TOOL_CALL_ID}: the newest ones, the one before them is let go`, () => {
    const h = createHarness({}, instantTool("x"));
    h.link.up = false; // every answer stays held: each call is still owed to the runtime, so a new request id is that call again
    for (let index = 0; index <= MAX_INPUTS_PER_TOOL_CALL_ID; index++) h.request(`r${index}`, "call_0", { input: { n: index } });
    // r1 … r8 are the 8 newest: kept. r0 is the 9th: let go, so a request of its key is a new call.
    expect(h.request("again-1", "call_0", { input: { n: 1 } })).toBe("replayed");
    expect(h.request("again-0", "call_0", { input: { n: 0 } })).toBe("reused");
    expect(h.settled.filter(({ record }) => record.toolCallId === "call_0")).toHaveLength(MAX_INPUTS_PER_TOOL_CALL_ID + 2);
  });

  it("counts distinct inputs, not reuses of one: a provider's call_0 reused with the same arguments turn after turn pushes no other input out", () => {
    const h = createHarness({}, instantTool("x"));
    const others = MAX_INPUTS_PER_TOOL_CALL_ID - 1;
    for (let index = 0; index < others; index++) h.request(`r-other-${index}`, "call_0", { input: { n: index } });
    // The same input as a new model request, again and again (answered each time: not a re-attempt).
    for (let index = 0; index < 2 * MAX_INPUTS_PER_TOOL_CALL_ID; index++) {
      expect(h.request(`r-same-${index}`, "call_0", { input: { n: "same" } })).toBe("reused");
    }
    expectAllKept(h, others);
  });

  it("…nor two inputs in turn (the superseded record of a key is found deeper in the chain, not at its head)", () => {
    const h = createHarness({}, instantTool("x"));
    const others = MAX_INPUTS_PER_TOOL_CALL_ID - 2;
    for (let index = 0; index < others; index++) h.request(`r-other-${index}`, "call_0", { input: { n: index } });
    for (let index = 0; index < 2 * MAX_INPUTS_PER_TOOL_CALL_ID; index++) {
      expect(h.request(`r-turn-${index}`, "call_0", { input: { n: index % 2 === 0 ? "even" : "odd" } })).toBe("reused");
    }
    expectAllKept(h, others);
  });
});

/** Each of the first `others` inputs is still kept: its re-delivery is answered from the cache (on a new epoch, written again), never run again. */
function expectAllKept(h: ReturnType<typeof createHarness>, others: number): void {
  const runs = h.settled.length;
  for (let index = 0; index < others; index++) expect(h.request(`r-other-${index}`, "call_0", { input: { n: index } })).toBe("duplicate");
  h.link.epoch = 2;
  h.table.epochStarted(2, true);
  for (let index = 0; index < others; index++) expect(h.request(`r-other-${index}`, "call_0", { input: { n: index } })).toBe("resent");
  expect(h.settled).toHaveLength(runs);
}
