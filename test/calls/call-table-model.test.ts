import fc from "fast-check";
import { afterEach, beforeEach, describe, it, vi } from "vitest";
import { callTableModelProperty } from "./call-table-model.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("CallTable model-based schedules", () => {
  it("keeps every invariant over 1,000 random schedules (4 scopes × 12 call ids, ≤ 64 steps)", async () => {
    await fc.assert(callTableModelProperty, { numRuns: 1_000 });
  });
});
