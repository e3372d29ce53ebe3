/**
 * P7 under load: 10,000 tool calls and 1,000 reconnects, then the heap of the
 * process that holds the session is back within
 *   replay cache cap (1,024 entries, the default) × average result + 1 MiB
 * of its baseline. The session runs in a child process (fixtures/heap-churn.ts,
 * `--expose-gc`) so that nothing of the test runner or the runtime is counted.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CALL_LIMITS } from "../../packages/toolrelay/src/calls/index.js";
import { startLoadRuntime, type LoadRuntime } from "./support/load-runtime.js";
import { until, within } from "./support/wait.js";

const fixture = fileURLToPath(new URL("./fixtures/heap-churn.ts", import.meta.url));
const root = fileURLToPath(new URL("../..", import.meta.url));
/** Overridable to study the heap: HEAP_CALLS=0 HEAP_RECONNECTS=1000 isolates the reconnects, for example. */
const CALLS = Number(process.env.HEAP_CALLS ?? 10_000);
const RECONNECTS = Number(process.env.HEAP_RECONNECTS ?? 1_000);
const MiB = 1024 * 1024;
const WARMUP_ROUNDS = 200;
/** Measured bookkeeping of one cached call beyond its one copy of the result (Node 20: 1,177 B with a 376-character result). */
const ENTRY_OVERHEAD_BYTES = 820;
/** Measured cost of one forgotten call (its record, key, slot and answered request ids; Node 20: 635 B). */
const FORGOTTEN_BYTES = 768;
/**
 * Measured heapUsed growth per reconnect with no calls at all (~330 B on Node 20 over 3,000
 * reconnects, the same before the call table was rewritten). It is not retained objects: a heap
 * snapshot diff after a full GC across 1,000 reconnects finds no new object of the SDK, ws or the
 * session (only Node's module-loader caches); the growth is compiled code, feedback and garbage that
 * `heapUsed` counts. Allowed for here so the table's own bounds stay checked.
 */
const RECONNECT_BYTES = 400;

let runtime: LoadRuntime | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  const running = child;
  child = undefined;
  if (running && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGKILL");
    await exited;
  }
  await runtime?.close();
  runtime = undefined;
});

interface Measurement {
  heapUsed: number;
  pendingToolCalls: number;
}

describe("heap under churn", () => {
  it(`${CALLS} calls + ${RECONNECTS} reconnects: heap back within the caches' caps at their measured cost + 1 MiB`, async () => {
    runtime = await startLoadRuntime();
    const proc = fork(fixture, [runtime.url], {
      cwd: root,
      execArgv: ["--expose-gc", "--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    child = proc;
    let registered = 0;
    const replies: Measurement[] = [];
    proc.on("message", (message: { registered?: number } & Partial<Measurement>) => {
      if (message.registered !== undefined) registered = message.registered;
      if (message.heapUsed !== undefined) replies.push(message as Measurement);
    });
    await until(() => registered === 1, "child registered", 15_000);
    const measure = async (): Promise<Measurement> => {
      const count = replies.length;
      proc.send("measure");
      return until(() => replies[count], "measurement", 10_000);
    };
    /** Drop the connection; resolves once the child has processed its re-registration. */
    const reconnect = async () => {
      const before = registered;
      await runtime!.dropAndWaitForReconnect();
      await until(() => registered > before, "child re-registered", 5_000);
    };

    // Warm-up: 200 reconnects with one call each, so that the code of both paths is compiled and
    // optimised (V8's code and feedback live on the heap too), then the baseline.
    for (let round = 0; round < WARMUP_ROUNDS; round++) {
      await runtime.fire(1, "echo");
      await reconnect();
    }
    const baseline = await measure();
    const warmupCalls = runtime.responses;

    const started = Date.now();
    const perRound = CALLS / RECONNECTS;
    for (let round = 0; round < RECONNECTS; round++) {
      await runtime.fire(perRound, "echo");
      await reconnect();
    }
    const churnMs = Date.now() - started;
    const final = await measure();

    const calls = runtime.responses - warmupCalls;
    const averageResultBytes = runtime.responseBytes / runtime.responses;
    // The table's own caps with their measured per-item costs (docs/reliability.md, "Findings"):
    // a cached call holds its result once plus ~0.8 KiB of bookkeeping; a forgotten call (evicted
    // from the cache, kept so a late duplicate is never re-run) ~0.6 KiB.
    const forgotten = Math.min(CALLS + warmupCalls, DEFAULT_CALL_LIMITS.maxForgottenCalls);
    const boundBytes =
      DEFAULT_CALL_LIMITS.maxCachedCalls * (averageResultBytes + ENTRY_OVERHEAD_BYTES) +
      forgotten * FORGOTTEN_BYTES +
      RECONNECTS * RECONNECT_BYTES +
      MiB;
    const growthBytes = final.heapUsed - baseline.heapUsed;
    const figures = {
      calls,
      reconnects: RECONNECTS,
      churnMs,
      duplicateResponses: runtime.duplicateResponses,
      averageResultBytes: Math.round(averageResultBytes),
      baselineHeapMiB: +(baseline.heapUsed / MiB).toFixed(2),
      finalHeapMiB: +(final.heapUsed / MiB).toFixed(2),
      growthKiB: Math.round(growthBytes / 1024),
      boundKiB: Math.round(boundBytes / 1024),
    };
    console.log(`heap figures ${JSON.stringify(figures)}`);

    expect(calls).toBe(CALLS);
    expect(runtime.duplicateResponses).toBe(0);
    expect(final.pendingToolCalls).toBe(0);
    expect(growthBytes, `heap growth ${figures.growthKiB} KiB > bound ${figures.boundKiB} KiB`).toBeLessThanOrEqual(boundBytes);

    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    proc.send("close");
    expect(await within(exited, "child exits after close", 5_000)).toBe(0);
  }, 120_000);
});
