import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { CLOSE_DRAIN_MAX_MS, CLOSE_DRAIN_QUIET_MS, CloseDrain } from "../../packages/toolrelay/src/session/close-drain.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  expect(vi.getTimerCount()).toBe(0);
  vi.useRealTimers();
});

function track(promise: Promise<void>): { done: boolean } {
  const state = { done: false };
  void promise.then(() => {
    state.done = true;
  });
  return state;
}

describe("CloseDrain", () => {
  it("waits for the quiet time when no request comes", async () => {
    const drain = new CloseDrain(systemTimers);
    const state = track(drain.quiet(() => true));
    await vi.advanceTimersByTimeAsync(CLOSE_DRAIN_QUIET_MS - 1);
    expect(state.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.done).toBe(true);
  });

  it("each request arriving meanwhile restarts the quiet time, up to the longest wait", async () => {
    const drain = new CloseDrain(systemTimers);
    const state = track(drain.quiet(() => true));
    await vi.advanceTimersByTimeAsync(100);
    drain.requestArrived();
    await vi.advanceTimersByTimeAsync(CLOSE_DRAIN_QUIET_MS - 1);
    expect(state.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.done).toBe(true);
    const busy = new CloseDrain(systemTimers);
    const capped = track(busy.quiet(() => true));
    for (let elapsed = 0; elapsed < CLOSE_DRAIN_MAX_MS - 50; elapsed += 50) {
      busy.requestArrived();
      await vi.advanceTimersByTimeAsync(50);
    }
    expect(capped.done).toBe(false);
    busy.requestArrived();
    await vi.advanceTimersByTimeAsync(50);
    expect(capped.done).toBe(true);
  });

  it("returns at once when the link is no longer open", async () => {
    const drain = new CloseDrain(systemTimers);
    const state = track(drain.quiet(() => false));
    await vi.advanceTimersByTimeAsync(0);
    expect(state.done).toBe(true);
  });
});
