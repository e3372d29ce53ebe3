/**
 * Model-based schedules of the call table at CI scale: 10,000 random schedules
 * (model-schedules.ts) keep every invariant. The mutants that prove the suite
 * can fail are in mutants.ts (run by mutation.test.ts).
 *
 * Reproduce a failure: the report prints its seed; run
 *   TOOLRELAY_MODEL_SEED=<seed> npx vitest run test/reliability/model-schedules.test.ts
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { emptyCoverage, scheduleProperty } from "./model-schedules.js";

/** Wall clock that fake timers do not touch (bound before any test fakes `performance`). */
const wallClock = performance.now.bind(performance);

/** 10,000 in CI. TOOLRELAY_MODEL_RUNS lowers it only for slow instrumented runs (e.g. --detectAsyncLeaks) and mutants. */
const RUNS = Number(process.env.TOOLRELAY_MODEL_RUNS ?? 10_000);
const seedFromEnvironment = process.env.TOOLRELAY_MODEL_SEED;
const SEED = seedFromEnvironment !== undefined ? Number(seedFromEnvironment) : Math.floor(Math.random() * 2 ** 31);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.clearAllTimers();
  vi.useRealTimers();
});

describe(`model-based schedules (${RUNS.toLocaleString("en")} runs)`, () => {
  it("keep every invariant", async () => {
    const coverage = emptyCoverage();
    const started = wallClock();
    const details = await fc.check(scheduleProperty(coverage), { numRuns: RUNS, seed: SEED });
    const seconds = ((wallClock() - started) / 1_000).toFixed(1);
    if (details.failed) {
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(
        `${fc.defaultReportMessage(details) ?? "property failed"}\n\nFailure: ${cause}\nreproduce with TOOLRELAY_MODEL_SEED=${SEED}`,
      );
    }
    console.log(
      `model schedules: ${details.numRuns} runs, seed ${SEED}, ${seconds} s, ${coverage.steps} steps, ${coverage.executions} executions, dispositions ${JSON.stringify(coverage.dispositions)}`,
    );
    expect(details.numRuns).toBe(RUNS);
    if (RUNS >= 1_000) for (const count of Object.values(coverage.dispositions)) expect(count).toBeGreaterThan(0);
  }, 300_000);
});
