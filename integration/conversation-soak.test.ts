/**
 * The conversation soak's fixed seed set (test/soak; longer runs: `npm run soak:conversations`):
 * seeded conversations of 1–6 turns against the REAL runtime — the local app-server, and the cloud
 * path (reference relay + real listener) — with a model taking 0–3 s per reply, pauses of 0–1.5 s
 * (0 included), 0–3 tool calls per reply, reused `call_0` ids, tools that throw, return errors,
 * time out or ignore their signal, aborts mid-call and close() mid-burst; four conversations at
 * once. Every invariant of test/soak/soak-run.ts holds for every turn. With the turn-lifecycle
 * fix reverted, master seed 7 fails within its first 16 conversations (seeds 25135766, 133054345,
 * 2097893167, …); with the reused-id fix reverted, seed 1567281004 fails.
 */
import { describe, expect, it } from "vitest";
import { replayCommand, runSoak } from "../test/soak/soak-driver.js";
import type { SoakBackendKind } from "../test/soak/soak-backends.js";

const MASTER_SEED = 7;
const CONVERSATIONS: Record<SoakBackendKind, number> = { local: 16, cloud: 12 };

describe("conversation soak (fixed seeds) against the real runtime", () => {
  for (const kind of ["local", "cloud"] as const) {
    it(`${kind}: ${CONVERSATIONS[kind]} conversations from master seed ${MASTER_SEED}, no invariant violated`, async () => {
      const report = await runSoak({ kind, masterSeed: MASTER_SEED, conversations: CONVERSATIONS[kind], concurrency: 4 });
      const explained = report.violations.map((violation) => {
        const seed = /seed (\d+)/.exec(violation)?.[1];
        return seed ? `${violation}\n  replay: ${replayCommand(kind, Number(seed))}` : violation;
      });
      console.log(
        `[soak ${kind}] ${report.conversations} conversations, ${report.turns} turns, ${report.toolRuns} tool runs, ${report.reusedIds} reused ids, ${report.aborted} aborted, ${report.closedMidBurst} closed mid-burst, ${(report.durationMs / 1000).toFixed(0)} s`,
      );
      expect(explained).toEqual([]);
      expect(report.conversations).toBe(CONVERSATIONS[kind]);
      expect(report.reusedIds).toBeGreaterThan(0);
      expect(report.aborted).toBeGreaterThan(0);
      expect(report.closedMidBurst).toBeGreaterThan(0);
    }, 240_000);
  }
});
