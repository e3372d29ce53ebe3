/**
 * One request per thread at a time, with the grace a request for a busy thread gets before its
 * 409 (fake timers: every wait is exact, and no timer is left behind).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { BUSY_GRACE_MS, RequestSlot } from "../../packages/toolrelay/src/openai/request-slot.js";

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe("RequestSlot", () => {
  it("a second request is refused with 409 thread_busy while one holds the slot", () => {
    const slot = new RequestSlot("thread-1", systemTimers);
    slot.take();
    expect(slot.busy).toBe(true);
    expect(() => slot.take()).toThrow(expect.objectContaining({ status: 409, code: "thread_busy" }));
    slot.release();
    expect(slot.busy).toBe(false);
    expect(() => slot.take()).not.toThrow();
  });

  it("a request waiting for a busy slot is told when it frees (within the grace), and no timer stays", async () => {
    const slot = new RequestSlot("thread-1", systemTimers);
    await expect(slot.whenFree()).resolves.toBe(true);
    slot.take();
    const waiting = slot.whenFree();
    await vi.advanceTimersByTimeAsync(BUSY_GRACE_MS - 1);
    slot.release();
    await expect(waiting).resolves.toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a slot that stays busy for the whole grace: whenFree says so (the request then gets its 409)", async () => {
    const slot = new RequestSlot("thread-1", systemTimers);
    slot.take();
    const waiting = slot.whenFree();
    await vi.advanceTimersByTimeAsync(BUSY_GRACE_MS);
    await expect(waiting).resolves.toBe(false);
    slot.release(); // no waiter is left to call
    expect(vi.getTimerCount()).toBe(0);
  });
});
