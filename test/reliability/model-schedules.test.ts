/**
 * Model-based schedules of the call table at CI scale (RELIABILITY.md, "Model-based schedules"):
 * 10,000 random schedules (≤ 64 steps over 4 scopes × 12 call ids, ≤ 16 concurrent calls) keep
 * every invariant, and the same property kills each planted bug of src/calls/planted-bugs.ts —
 * the run at which it was killed is printed ("planted bug X killed at run N").
 *
 * Reproduce a failure: the report prints its seed; run
 *   TOOLRELAY_MODEL_SEED=<seed> npx vitest run test/reliability/model-schedules.test.ts
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { __plantedBugs, type PlantedBugs } from "../../src/calls/index.js";
import { emptyCoverage, modelSchedulesProperty } from "./model-schedules-commands.js";

/** Wall clock that fake timers do not touch (bound before any test fakes `performance`). */
const wallClock = performance.now.bind(performance);

/** 10,000 in CI. TOOLRELAY_MODEL_RUNS lowers it only for slow instrumented runs (e.g. --detectAsyncLeaks). */
const RUNS = Number(process.env.TOOLRELAY_MODEL_RUNS ?? 10_000);
const seedFromEnvironment = process.env.TOOLRELAY_MODEL_SEED;
const SEED = seedFromEnvironment !== undefined ? Number(seedFromEnvironment) : Math.floor(Math.random() * 2 ** 31);
const REPRODUCE = `TOOLRELAY_MODEL_SEED=${SEED} npx vitest run test/reliability/model-schedules.test.ts`;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.clearAllTimers();
  vi.useRealTimers();
});

describe("model-based schedules (10,000 runs)", () => {
  it(`keeps every invariant over ${RUNS.toLocaleString("en")} random schedules`, async () => {
    const coverage = emptyCoverage();
    const started = wallClock();
    const details = await fc.check(modelSchedulesProperty(coverage), { numRuns: RUNS, seed: SEED });
    const seconds = ((wallClock() - started) / 1_000).toFixed(1);
    if (details.failed) {
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(`${fc.defaultReportMessage(details) ?? "property failed"}\n\nFailure: ${cause}\nseed ${SEED}; reproduce with: ${REPRODUCE}`);
    }
    console.log(
      `model schedules: ${details.numRuns} runs, seed ${SEED}, ${seconds} s, ${coverage.steps} steps, ` +
        `${coverage.executions} executions, ${coverage.lateResults} late results, ${coverage.linkDrops} link drops, ` +
        `peak ${coverage.maxConcurrent} concurrent (${coverage.runsAtCap} schedules at the cap), dispositions ${JSON.stringify(coverage.dispositions)}`,
    );
    expect(details.numRuns).toBe(RUNS);
    // The schedules reach every disposition the table has (a model that never evicts proves nothing about "expired").
    for (const count of Object.values(coverage.dispositions)) expect(count).toBeGreaterThan(0);
  }, 120_000);

  const flags: Array<keyof PlantedBugs> = ["reexecuteOnReplay", "leakTimer", "keyByToolCallIdOnly"];

  it.each(flags)(`planted bug %s is killed within ${RUNS.toLocaleString("en")} runs`, async (flag) => {
    let details: { failed: boolean; numRuns: number; errorInstance: unknown } | undefined;
    try {
      __plantedBugs[flag] = true;
      details = await fc.check(modelSchedulesProperty(), { numRuns: RUNS, seed: SEED, endOnFailure: true });
    } finally {
      __plantedBugs[flag] = false;
    }
    if (details === undefined) throw new Error("fc.check did not run");
    expect(details.failed, `planted bug ${flag} survived ${RUNS} runs (seed ${SEED})`).toBe(true);
    console.log(`planted bug ${flag} killed at run ${details.numRuns} (seed ${SEED}): ${String(details.errorInstance).split("\n")[0]}`);
    expect(details.numRuns).toBeLessThanOrEqual(RUNS);
  }, 120_000);
});
