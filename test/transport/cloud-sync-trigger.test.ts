import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { CloudSyncTrigger } from "../../packages/toolrelay/src/transport/cloud-sync-trigger.js";

function trigger(options: { debounceMs?: number; minIntervalMs?: number; maxIntervalMs?: number; open?: () => boolean } = {}) {
  const sentAt: number[] = [];
  const instance = new CloudSyncTrigger({
    timers: systemTimers,
    debounceMs: options.debounceMs,
    minIntervalMs: options.minIntervalMs,
    maxIntervalMs: options.maxIntervalMs,
    send: () => {
      if (options.open && !options.open()) return false;
      sentAt.push(Date.now());
      return true;
    },
  });
  return { instance, sentAt };
}

describe("CloudSyncTrigger", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
  });

  it("collapses a burst of requests into one sync after the debounce (default 250 ms)", () => {
    const { instance, sentAt } = trigger();
    for (let index = 0; index < 20; index++) instance.request();
    vi.advanceTimersByTime(249);
    expect(sentAt).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sentAt).toEqual([250]);
    expect(instance.sent).toBe(1);
  });

  it("keeps two syncs at least minIntervalMs apart (default 5,000 ms)", () => {
    const { instance, sentAt } = trigger();
    instance.request();
    vi.advanceTimersByTime(250); // sent at 250
    instance.request(); // due at max(500, 5250)
    vi.advanceTimersByTime(4_999);
    expect(sentAt).toEqual([250]);
    vi.advanceTimersByTime(1);
    expect(sentAt).toEqual([250, 5_250]);
  });

  it("backs off while holes keep coming (5, 10, 20 … s, capped), and resetBackoff starts over", () => {
    const { instance, sentAt } = trigger({ debounceMs: 0, minIntervalMs: 1_000, maxIntervalMs: 4_000 });
    for (let index = 0; index < 6; index++) {
      instance.request();
      vi.advanceTimersByTime(10_000);
    }
    const gaps = sentAt.slice(1).map((at, index) => at - sentAt[index]!);
    expect(gaps.slice(0, 3)).toEqual([10_000, 10_000, 10_000]); // requests 10 s apart are not held back
    const burst = trigger({ debounceMs: 0, minIntervalMs: 1_000, maxIntervalMs: 4_000 });
    for (let step = 0; step < 15_000; step += 100) {
      burst.instance.request(); // a hole every 100 ms, forever (a relay that filters by runtime)
      vi.advanceTimersByTime(100);
    }
    const spacing = burst.sentAt.slice(1).map((at, index) => at - burst.sentAt[index]!);
    expect(spacing).toEqual([1_000, 2_000, 4_000, 4_000, 4_000]);
    burst.instance.resetBackoff();
    expect(burst.instance.intervalMs).toBe(1_000);
    burst.instance.stop();
    instance.stop();
  });

  it("markSent cancels a pending sync and restarts the interval", () => {
    const { instance, sentAt } = trigger({ debounceMs: 100, minIntervalMs: 1_000 });
    instance.request();
    instance.markSent(); // the session's own sync went out at t=0
    vi.advanceTimersByTime(5_000);
    expect(sentAt).toEqual([]);
    instance.request(); // at 5000: due at max(5100, 1000)
    vi.advanceTimersByTime(100);
    expect(sentAt).toEqual([5_100]);
  });

  it("drops a sync while the link is down (the reconnect re-syncs)", () => {
    let open = false;
    const { instance, sentAt } = trigger({ debounceMs: 10, open: () => open });
    instance.request();
    vi.advanceTimersByTime(10);
    expect(sentAt).toEqual([]);
    expect(instance.sent).toBe(0);
    open = true;
    instance.request();
    vi.advanceTimersByTime(10); // no minimum interval was started by the failed attempt
    expect(sentAt).toEqual([20]);
  });

  it("cancel drops a pending sync but accepts later requests", () => {
    const { instance, sentAt } = trigger({ debounceMs: 10 });
    instance.request();
    instance.cancel();
    vi.advanceTimersByTime(1_000);
    expect(sentAt).toEqual([]);
    instance.request();
    vi.advanceTimersByTime(10);
    expect(sentAt).toEqual([1_010]);
  });

  it("stop cancels and refuses further requests", () => {
    const { instance, sentAt } = trigger();
    instance.request();
    instance.stop();
    instance.request();
    vi.advanceTimersByTime(60_000);
    expect(sentAt).toEqual([]);
    expect(instance.pending).toBe(false);
  });
});
