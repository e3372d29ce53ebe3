import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { HeartbeatWatchdog } from "../../packages/toolrelay/src/transport/heartbeat-watchdog.js";

type Channel = "control" | "stream";

/** Deadlines from the start unless told otherwise (most tests are about the deadline itself). */
function watchdog(options: { pingIntervalMs?: number; pongTimeoutMs?: number; deadlineFromStart?: boolean } = {}) {
  const pings: Array<[Channel, number]> = [];
  const timeouts: Array<[Channel, number, number]> = [];
  const instance = new HeartbeatWatchdog<Channel>({
    channels: ["control", "stream"],
    timers: systemTimers,
    deadlineFromStart: true,
    ...options,
    sendPing: (channel) => pings.push([channel, Date.now()]),
    onTimeout: (channel, silentForMs) => timeouts.push([channel, Date.now(), silentForMs]),
  });
  return { instance, pings, timeouts };
}

describe("HeartbeatWatchdog", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
  });

  it("pings both channels every 10 s by default", () => {
    const { instance, pings } = watchdog();
    instance.start();
    vi.advanceTimersByTime(9_999);
    expect(pings).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(pings).toEqual([
      ["control", 10_000],
      ["stream", 10_000],
    ]);
    instance.received("control");
    instance.received("stream");
    vi.advanceTimersByTime(10_000);
    expect(pings).toHaveLength(4);
    instance.stop();
  });

  it("declares a silent channel dead exactly pingInterval + pongTimeout (30 s) after its last message", () => {
    const { instance, timeouts } = watchdog();
    instance.start(); // t=0: both count as alive
    // control keeps answering, stream goes silent (half-open)
    for (let t = 10_000; t < 30_000; t += 10_000) {
      vi.advanceTimersByTime(10_000);
      instance.received("control");
    }
    vi.advanceTimersByTime(9_999); // t=29_999
    expect(timeouts).toEqual([]);
    vi.advanceTimersByTime(1); // t=30_000: the ping at 10 s was never answered on stream
    expect(timeouts).toEqual([["stream", 30_000, 30_000]]);
    expect(instance.running).toBe(false);
    vi.advanceTimersByTime(60_000);
    expect(timeouts).toHaveLength(1);
  });

  it("accepts any inbound traffic as an answer, not only pong", () => {
    const { instance, timeouts } = watchdog({ pingIntervalMs: 100, pongTimeoutMs: 200 });
    instance.start();
    for (let step = 0; step < 50; step++) {
      vi.advanceTimersByTime(150);
      instance.received("control");
      instance.received("stream");
    }
    expect(timeouts).toEqual([]);
    instance.stop();
  });

  it("keeps the deadline of the first unanswered ping (later pings do not extend it)", () => {
    const { instance, pings, timeouts } = watchdog({ pingIntervalMs: 100, pongTimeoutMs: 250 });
    instance.start();
    vi.advanceTimersByTime(100); // first ping, deadline 350
    instance.received("stream");
    vi.advanceTimersByTime(249); // t=349; pings at 200, 300 unanswered on control
    expect(timeouts).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(timeouts.map(([channel, at]) => [channel, at])).toEqual([["control", 350]]);
    expect(pings.filter(([channel]) => channel === "control")).toHaveLength(3);
  });

  it("pingIntervalMs 0 turns it off; pongTimeoutMs 0 pings without a deadline", () => {
    const off = watchdog({ pingIntervalMs: 0 });
    off.instance.start();
    expect(vi.getTimerCount()).toBe(0);
    const noDeadline = watchdog({ pingIntervalMs: 100, pongTimeoutMs: 0 });
    noDeadline.instance.start();
    vi.advanceTimersByTime(10_000);
    expect(noDeadline.pings).toHaveLength(200);
    expect(noDeadline.timeouts).toEqual([]);
    noDeadline.instance.stop();
  });

  it("gives a channel no deadline until it answered a ping once; from then on a silent one is dead", () => {
    const { instance, timeouts } = watchdog({ pingIntervalMs: 100, pongTimeoutMs: 200, deadlineFromStart: false });
    instance.start();
    // Neither channel ever answers: a relay that does not answer pings. Idle, but not dead.
    vi.advanceTimersByTime(5_000);
    expect(timeouts).toEqual([]);
    expect(instance.isAnswering("control")).toBe(false);
    // control answers once (a JSON pong or a protocol pong), then goes silent.
    instance.answered("control");
    expect(instance.isAnswering("control")).toBe(true);
    vi.advanceTimersByTime(299); // t=5_299: the ping at 5_100 armed a 200 ms deadline
    expect(timeouts).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(timeouts).toEqual([["control", 5_300, 300]]);
    expect(instance.running).toBe(false);
  });

  it("a restart forgets which channels answered", () => {
    const { instance, timeouts } = watchdog({ pingIntervalMs: 100, pongTimeoutMs: 100, deadlineFromStart: false });
    instance.start();
    instance.answered("stream");
    instance.start();
    expect(instance.isAnswering("stream")).toBe(false);
    vi.advanceTimersByTime(1_000);
    expect(timeouts).toEqual([]);
    instance.stop();
  });

  it("stop clears every timer, restart begins afresh", () => {
    const { instance, timeouts } = watchdog({ pingIntervalMs: 100, pongTimeoutMs: 100 });
    instance.start();
    vi.advanceTimersByTime(150);
    instance.stop();
    expect(vi.getTimerCount()).toBe(0);
    instance.start();
    vi.advanceTimersByTime(199);
    expect(timeouts).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(timeouts).toHaveLength(1); // the watchdog stops after the first dead channel
  });
});
