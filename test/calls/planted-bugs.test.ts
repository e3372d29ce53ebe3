/**
 * Each planted bug (src/calls/planted-bugs.ts) is caught: the same scenario the
 * unit tests run passes with the bug off and fails with it on, and the
 * model-based property fails with it on too.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { __plantedBugs, type PlantedBugs } from "../../src/calls/index.js";
import { callTableModelProperty } from "./call-table-model.js";
import { replayScenario, scopeIsolationScenario, timerCleanupScenario } from "./scenarios.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  __plantedBugs.reexecuteOnReplay = false;
  __plantedBugs.leakTimer = false;
  __plantedBugs.keyByToolCallIdOnly = false;
  vi.useRealTimers();
});

const cases: Array<[keyof PlantedBugs, () => Promise<void>]> = [
  ["reexecuteOnReplay", replayScenario],
  ["leakTimer", timerCleanupScenario],
  ["keyByToolCallIdOnly", () => scopeIsolationScenario({ conversationId: "conversation-2" })],
];

describe("planted bugs", () => {
  it("are all off by default", () => {
    expect(__plantedBugs).toEqual({ reexecuteOnReplay: false, leakTimer: false, keyByToolCallIdOnly: false });
  });

  it.each(cases)("%s is caught by its unit test", async (flag, scenario) => {
    await expect(scenario()).resolves.toBeUndefined();
    vi.clearAllTimers();
    __plantedBugs[flag] = true;
    await expect(scenario()).rejects.toThrow();
  });

  it.each(cases)("%s is caught by the model-based property", async (flag) => {
    __plantedBugs[flag] = true;
    const result = await fc.check(callTableModelProperty, { numRuns: 1_000, seed: 42 });
    expect(result.failed).toBe(true);
  });
});
