/**
 * A tenant flooding the relay must not stall another tenant. The relay runs in its own process
 * (the CLI, two tenants), the flooder in a third (100,000 pre-masked frames written as fast as
 * TCP takes them, costing it almost nothing), and the victim — its listener and its SDK client —
 * here. The victim's round-trip p99 during the flood is compared with its quiet p99 measured
 * just before, in the same run: the bound is a ratio, never an absolute time. `npm run bench`
 * measures the same (bench/suites/relay-flood.ts).
 */
import { describe, expect, it } from "vitest";
import { measureFloodRatio } from "../relay/support/flood-harness.js";

const FLOOD_FRAMES = 100_000;
const MAX_RATIO = 5;

describe("flood from another tenant", () => {
  it(`a victim's round-trip p99 during a ${FLOOD_FRAMES.toLocaleString("en")}-frame flood stays within ${MAX_RATIO}× its quiet p99`, async () => {
    const result = await measureFloodRatio({ frames: FLOOD_FRAMES, quietRoundTrips: 2_000 });
    console.info(
      `[flood] quiet p50 ${result.quiet.p50.toFixed(2)} ms p99 ${result.quiet.p99.toFixed(2)} ms (n=${result.quiet.count}); ` +
        `during the flood p50 ${result.flood.p50.toFixed(2)} ms p99 ${result.flood.p99.toFixed(2)} ms max ${result.flood.max.toFixed(1)} ms (n=${result.flood.count}); ` +
        `ratio p99 ${result.ratio.toFixed(2)}×; ${result.forwarded} flood frames forwarded in ${Math.round(result.floodMs)} ms`,
    );
    expect(result.forwarded).toBe(FLOOD_FRAMES); // the flood really went through the relay
    expect(result.flood.count).toBeGreaterThanOrEqual(100); // the victim was measured throughout
    expect(result.ratio).toBeLessThanOrEqual(MAX_RATIO);
  }, 180_000);

  it("during a flood of 16 frames of 8 MiB the victim keeps getting answers between them (no frame blocks the relay for the whole flood)", async () => {
    const result = await measureFloodRatio({ frames: 16, padBytes: 8 * 1024 * 1024, warmup: 100, quietRoundTrips: 500 });
    console.info(
      `[flood, 8 MiB frames] quiet p99 ${result.quiet.p99.toFixed(2)} ms; during p50 ${result.flood.p50.toFixed(2)} ms p99 ${result.flood.p99.toFixed(2)} ms max ${result.flood.max.toFixed(1)} ms ` +
        `(n=${result.flood.count}); ratio p99 ${result.ratio.toFixed(2)}×; 128 MiB forwarded in ${Math.round(result.floodMs)} ms`,
    );
    expect(result.forwarded).toBe(16);
    expect(result.flood.count).toBeGreaterThanOrEqual(16);
    expect(result.flood.max).toBeLessThan(result.floodMs);
  }, 180_000);
});
