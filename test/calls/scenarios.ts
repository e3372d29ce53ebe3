/**
 * Unit-test bodies shared by the regular tests and the planted-bug tests: the
 * planted-bug tests switch one bug on and prove that the very same scenario
 * then fails. Each scenario needs `vi.useFakeTimers()`.
 */
import { expect, vi } from "vitest";
import type { CallKey } from "../../src/calls/index.js";
import { callKey, createHarness, deferredRun, flushMicrotasks, ok } from "./table-harness.js";

/** A duplicate after settlement replays the very same response object at once, without running. */
export async function replayScenario(): Promise<void> {
  const { table, frames, settled } = createHarness();
  const tool = deferredRun();
  const request = (requestId: string) => ({ requestId, key: callKey("t1"), toolName: "x", timeoutMs: 1_000, run: tool.run });
  expect(table.request(request("r1"))).toBe("started");
  tool.resolve(ok("row 1"));
  await flushMicrotasks();
  expect(table.request(request("r2"))).toBe("replayed");
  await flushMicrotasks();
  expect(tool.calls).toBe(1);
  expect(frames.map((frame) => frame.requestId)).toEqual(["r1", "r2"]);
  expect(frames[1]?.response).toBe(frames[0]?.response);
  expect(settled).toHaveLength(1);
  table.close();
}

/** A call that settles before its deadline leaves no timer behind. */
export async function timerCleanupScenario(): Promise<void> {
  const { table } = createHarness();
  const tool = deferredRun();
  table.request({ requestId: "r1", key: callKey("t1"), toolName: "x", timeoutMs: 60_000, run: tool.run });
  table.request({ requestId: "r2", key: callKey("t2"), toolName: "x", timeoutMs: 60_000, run: () => ok("sync") });
  expect(vi.getTimerCount()).toBe(1);
  tool.resolve(ok("done"));
  await flushMicrotasks();
  expect(table.pendingCount).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
  table.close();
}

/** The same tool call id in another connection / agent / conversation is another call. */
export async function scopeIsolationScenario(scope: Partial<CallKey>): Promise<void> {
  const { table, frames } = createHarness();
  const here = deferredRun();
  const there = deferredRun();
  const request = (requestId: string, key: CallKey, run: typeof here.run) => ({ requestId, key, toolName: "x", timeoutMs: 1_000, run });
  expect(table.request(request("r1", callKey("same-id"), here.run))).toBe("started");
  expect(table.request(request("r2", callKey("same-id", scope), there.run))).toBe("started");
  expect(here.calls).toBe(1);
  expect(there.calls).toBe(1);
  there.resolve(ok("there"));
  here.resolve(ok("here"));
  await flushMicrotasks();
  const byRequest = new Map(frames.map((frame) => [frame.requestId, JSON.stringify(frame.response)]));
  expect(byRequest.get("r1")).toContain('"here"');
  expect(byRequest.get("r2")).toContain('"there"');
  expect(table.request(request("r3", callKey("same-id", scope), here.run))).toBe("replayed");
  expect(JSON.stringify(frames.at(-1)?.response)).toContain('"there"');
  table.close();
}
