/**
 * Chaos schedules: what the scripted runtime asks for (16 concurrent tool
 * calls, some re-sent as duplicates) and what the fault proxy does to the link
 * meanwhile (resets, FIN closes, blackholes, paused reads, refused reconnects,
 * latency, byte-by-byte delivery), all drawn from one seeded PRNG.
 */
import type { FaultProxy } from "../../../packages/toolrelay/src/testing/index.js";
import type { Prng } from "./prng.js";

export type FaultKind = "reset" | "closeAll" | "blackhole" | "pauseReading" | "refuseNew" | "latency" | "byteByByte";

export interface FaultStep {
  kind: FaultKind;
  /** When it starts, in ms after the turn was sent. */
  atMs: number;
  /** How long it lasts (blackhole, pauseReading, refuseNew, latency, byteByByte), in ms. */
  durationMs: number;
  /** For latency: ms per chunk. */
  latencyMs: number;
}

export interface ScheduledCall {
  toolCallId: string;
  /** How long the tool works, in ms. */
  workMs: number;
  /** Re-send the request (same tool_call_id, fresh request_id) this many ms after the first one; undefined: no duplicate. */
  resendAfterMs: number | undefined;
}

export interface ChaosSchedule {
  index: number;
  seed: number;
  calls: ScheduledCall[];
  faults: FaultStep[];
}

export const CALLS_PER_SCHEDULE = 16;

export function generateSchedule(index: number, seed: number, prng: Prng): ChaosSchedule {
  const calls: ScheduledCall[] = [];
  for (let call = 0; call < CALLS_PER_SCHEDULE; call++) {
    calls.push({
      toolCallId: `s${index}-c${call}`,
      workMs: prng.int(0, 120),
      resendAfterMs: prng.chance(0.25) ? prng.int(0, 150) : undefined,
    });
  }
  const faults: FaultStep[] = [];
  const count = prng.int(1, 3);
  for (let step = 0; step < count; step++) {
    const kind = prng.pick<FaultKind>(["reset", "closeAll", "blackhole", "pauseReading", "refuseNew", "latency", "byteByByte", "reset"]);
    faults.push({ kind, atMs: prng.int(0, 250), durationMs: prng.int(30, 250), latencyMs: prng.int(2, 40) });
  }
  // refuseNew alone changes nothing: pair it with a reset so that a reconnect meets the refusals.
  if (faults.some((fault) => fault.kind === "refuseNew")) {
    const refuse = faults.find((fault) => fault.kind === "refuseNew")!;
    faults.push({ kind: "reset", atMs: refuse.atMs + 5, durationMs: 0, latencyMs: 0 });
  }
  faults.sort((left, right) => left.atMs - right.atMs);
  return { index, seed, calls, faults };
}

/** A one-line description for failure messages and logs. */
export function describeSchedule(schedule: ChaosSchedule): string {
  const faults = schedule.faults.map((fault) => `${fault.kind}@${fault.atMs}${fault.durationMs ? `+${fault.durationMs}` : ""}`).join(" ");
  const resends = schedule.calls.filter((call) => call.resendAfterMs !== undefined).length;
  return `schedule ${schedule.index} (seed ${schedule.seed}): ${schedule.calls.length} calls, ${resends} duplicates, faults: ${faults}`;
}

/**
 * Play the faults of `schedule` on `proxy`, starting now. Resolves once every
 * fault is over (the proxy is then clear). `stop()` clears every timer and
 * fault at once.
 */
export function playFaults(proxy: FaultProxy, schedule: ChaosSchedule): { done: Promise<void>; stop(): void } {
  const timers = new Set<NodeJS.Timeout>();
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let remaining = schedule.faults.length;
  const later = (ms: number, action: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
  };
  const ended = () => {
    remaining--;
    if (remaining === 0) {
      proxy.clearFaults();
      finish();
    }
  };
  if (remaining === 0) finish();
  for (const fault of schedule.faults) {
    later(fault.atMs, () => {
      switch (fault.kind) {
        case "reset":
          proxy.reset();
          return ended();
        case "closeAll":
          proxy.closeAll();
          return ended();
        case "blackhole":
          proxy.blackhole(true);
          return later(fault.durationMs, () => {
            proxy.blackhole(false);
            ended();
          });
        case "pauseReading":
          proxy.pauseReading(true);
          return later(fault.durationMs, () => {
            proxy.pauseReading(false);
            ended();
          });
        case "refuseNew":
          proxy.refuseNew(true);
          return later(fault.durationMs, () => {
            proxy.refuseNew(false);
            ended();
          });
        case "latency":
          proxy.latency(fault.latencyMs);
          return later(fault.durationMs, () => {
            proxy.latency(0);
            ended();
          });
        case "byteByByte":
          proxy.byteByByte(true);
          return later(fault.durationMs, () => {
            proxy.byteByByte(false);
            ended();
          });
      }
    });
  }
  return {
    done,
    stop() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      proxy.clearFaults();
      finish();
    },
  };
}
