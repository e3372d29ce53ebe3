/**
 * The sweep for environments nobody holds (packages/relay/src/cluster/orphan-sweep.ts), with its
 * store calls injected: it offers only the environments with a record and no lease, keeps sweeping
 * after a failed sweep (logged), and stops for good. Against real nodes and NATS:
 * integration/relay-cluster-orphans.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OrphanSweep, orphanSweepIntervalMs } from "../../packages/relay/src/cluster/orphan-sweep.js";
import type { RelayLogger } from "../../packages/relay/src/relay-options.js";
import { systemTimers } from "../../packages/toolrelay/src/protocol/index.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function recordingLogger(): RelayLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, debug: () => {}, info: (message) => lines.push(`info ${message}`), warn: (message) => lines.push(`warn ${message}`) };
}

describe("orphanSweepIntervalMs", () => {
  it("is a quarter of the grace time, at least twice the lease TTL, at most a minute", () => {
    expect(orphanSweepIntervalMs(300_000, 3_000)).toBe(60_000);
    expect(orphanSweepIntervalMs(40_000, 3_000)).toBe(10_000);
    expect(orphanSweepIntervalMs(2_000, 1_500)).toBe(3_000);
    expect(orphanSweepIntervalMs(0, 3_000)).toBe(6_000);
  });
});

describe("OrphanSweep", () => {
  it("offers only what has a record and no lease, and returns what it took", async () => {
    const offered: string[] = [];
    const sweep = new OrphanSweep({
      intervalMs: 1_000,
      timers: systemTimers,
      logger: recordingLogger(),
      recorded: async () => ["env-held", "env-free", "env-taken-elsewhere"],
      leased: async () => ["env-held", "env-other-bucket-entry"],
      takeOver: async (connectionId) => {
        offered.push(connectionId);
        return connectionId === "env-free";
      },
    });
    expect(await sweep.sweep()).toEqual(["env-free"]);
    expect(offered).toEqual(["env-free", "env-taken-elsewhere"]);
  });

  it("sweeps every half to whole interval; a failed sweep is logged and the next one still comes; stop() ends it", async () => {
    const logger = recordingLogger();
    let sweeps = 0;
    const sweep = new OrphanSweep({
      intervalMs: 1_000,
      timers: systemTimers,
      logger,
      recorded: async () => {
        sweeps++;
        if (sweeps === 1) throw new Error("store unreachable");
        return ["env-free"];
      },
      leased: async () => [],
      takeOver: async () => true,
    });
    sweep.start();
    await vi.advanceTimersByTimeAsync(499);
    expect(sweeps).toBe(0);
    await vi.advanceTimersByTimeAsync(501);
    expect(sweeps).toBe(1);
    expect(logger.lines).toEqual(["warn relay: sweeping for environments nobody holds failed"]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sweeps).toBe(2);
    expect(logger.lines.at(-1)).toBe("info relay: environments nobody held were taken over (their grace time runs here)");
    await sweep.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sweeps).toBe(2);
  });
});
