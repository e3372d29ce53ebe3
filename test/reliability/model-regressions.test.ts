/**
 * Regression tests for CallTable bugs found by the model-based schedules
 * (model-schedules.test.ts). Each fails until the SDK is fixed; the model
 * property tolerates the bug only while these fail (it probes the SDK).
 */
import { describe, expect, it } from "vitest";
import { heldResponseEvictionScenario } from "./model-held-eviction.js";

describe("CallTable regressions found by the model", () => {
  it.each(["count", "age"] as const)(
    "a response held while the link is down is not lost when its cache entry is evicted (by %s)",
    (by) => {
      const { answered, texts } = heldResponseEvictionScenario(by);
      // r1 settled while the link was down; the runtime kept the call (redeliver), so it is owed an answer:
      // its result, or past the cache an explicit "outcome unknown" — never silence.
      expect(answered).toContain("r1");
      expect(texts.get("r1")).toMatch(/one|outcome unknown/);
    },
  );

  it.each(["count", "age"] as const)(
    "a held response delivered from an evicted entry is not answered again when its request is redelivered (by %s)",
    (by) => {
      const { answered, repeatDisposition } = heldResponseEvictionScenario(by);
      expect(repeatDisposition).toBe("duplicate");
      expect(answered.filter((requestId) => requestId === "r1")).toHaveLength(1);
    },
  );
});
