/**
 * `proof: "answers"` (the cloud link's heartbeat): only an answer to a ping clears its deadline,
 * and with `deadlineFromStart` the deadline is owed from `start()` on. Fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { HeartbeatWatchdog } from "../../packages/toolrelay/src/transport/heartbeat-watchdog.js";

type Channel = "control" | "stream";

function watchdog(proof: "traffic" | "answers", deadlineFromStart: boolean) {
  const timeouts: Array<[Channel, number, number]> = [];
  let pings = 0;
  const instance = new HeartbeatWatchdog<Channel>({
    channels: ["control", "stream"],
    timers: systemTimers,
    deadlineFromStart,
    proof,
    sendPing: () => {
      pings++;
    },
    onTimeout: (channel, silentForMs) => timeouts.push([channel, Date.now(), silentForMs]),
  });
  return { instance, timeouts, pings: () => pings };
}

describe("HeartbeatWatchdog proof of life", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
  });

  it('"answers": inbound traffic does not clear a deadline; a channel that only receives is dead pingInterval + pongTimeout after start', () => {
    const { instance, timeouts } = watchdog("answers", true);
    instance.start();
    for (let t = 0; t < 29_000; t += 1_000) {
      vi.advanceTimersByTime(1_000);
      instance.received("control"); // frames keep coming on both: no proof that the far end hears us
      instance.received("stream");
    }
    vi.advanceTimersByTime(999); // t = 29_999
    expect(timeouts).toEqual([]);
    vi.advanceTimersByTime(1); // t = 30_000
    expect(timeouts).toEqual([["control", 30_000, 30_000]]);
    expect(instance.running).toBe(false);
  });

  it('"answers": an answer clears the deadline and restarts the count from it', () => {
    const { instance, timeouts } = watchdog("answers", true);
    instance.start();
    vi.advanceTimersByTime(10_000); // ping 1 arms both deadlines (due at 30 s)
    instance.answered("control");
    instance.answered("stream");
    vi.advanceTimersByTime(5_000); // t = 15 s: the last answers were at 10 s
    vi.advanceTimersByTime(24_999); // t = 39_999: ping 2 at 20 s armed deadlines due at 40 s
    expect(timeouts).toEqual([]);
    instance.answered("stream"); // stream answers ping 3 (30 s); control stays silent
    vi.advanceTimersByTime(1); // t = 40_000
    expect(timeouts).toEqual([["control", 40_000, 30_000]]);
  });

  it('"traffic" (the default, the local link\'s): inbound traffic does clear the deadline', () => {
    const { instance, timeouts } = watchdog("traffic", true);
    instance.start();
    for (let t = 0; t < 60_000; t += 1_000) {
      vi.advanceTimersByTime(1_000);
      instance.received("control");
      instance.received("stream");
    }
    expect(timeouts).toEqual([]);
    instance.stop();
  });

  it("without deadlineFromStart, a channel that never answered gets no deadline (either proof)", () => {
    for (const proof of ["traffic", "answers"] as const) {
      const { instance, timeouts, pings } = watchdog(proof, false);
      instance.start();
      vi.advanceTimersByTime(120_000);
      expect(timeouts).toEqual([]);
      expect(pings()).toBe(24);
      instance.stop();
    }
  });

  it('"answers": a pong before start() is forgotten; after stop() nothing fires', () => {
    const { instance, timeouts } = watchdog("answers", true);
    instance.answered("control"); // not running: no effect on the next start's clock
    instance.start();
    vi.advanceTimersByTime(29_999);
    instance.stop();
    vi.advanceTimersByTime(60_000);
    expect(timeouts).toEqual([]);
  });
});
