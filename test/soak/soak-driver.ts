/**
 * Drives many soak conversations at once on one backend: seeds drawn from a master seed, at most
 * `concurrency` conversations running, until `conversations` ran or `minutes` passed. Unhandled
 * rejections and uncaught exceptions in this process count as violations.
 */
import { Prng } from "../reliability/support/prng.js";
import { startSoakBackend, type SoakBackendKind } from "./soak-backends.js";
import type { PlanLimits } from "./soak-plan.js";
import { emptyCounts, runConversation, type SoakCounts } from "./soak-run.js";

export interface SoakOptions {
  kind: SoakBackendKind;
  masterSeed: number;
  /** Run exactly these conversation seeds (a replay) instead of drawing them from the master seed. */
  replay?: readonly number[];
  /** Stop after this many conversations (started). */
  conversations?: number;
  /** Stop starting conversations after this long. */
  minutes?: number;
  concurrency: number;
  limits?: PlanLimits;
  /** Told each conversation's seed as it starts (for progress lines). */
  onConversation?(seed: number, index: number): void;
}

export interface SoakReport extends SoakCounts {
  kind: SoakBackendKind;
  masterSeed: number;
  seeds: number[];
  durationMs: number;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const started = Date.now();
  const counts = emptyCounts();
  const seeds: number[] = [];
  const master = new Prng(options.masterSeed);
  const onUnhandled = (error: unknown) => counts.violations.push(`unhandled: ${error instanceof Error ? error.stack : String(error)}`);
  process.on("unhandledRejection", onUnhandled);
  process.on("uncaughtException", onUnhandled);
  const backend = await startSoakBackend(options.kind);
  const endAt = options.minutes === undefined ? Number.POSITIVE_INFINITY : started + options.minutes * 60_000;
  const wanted = options.replay?.length ?? options.conversations ?? Number.POSITIVE_INFINITY;
  let next = 0;
  const worker = async () => {
    while (next < wanted && Date.now() < endAt) {
      const index = next++;
      const seed = options.replay?.[index] ?? master.int(1, 0x7fffffff);
      seeds[index] = seed;
      options.onConversation?.(seed, index);
      try {
        await runConversation(index, seed, backend.model, (tools) => backend.open(tools), counts, options.limits);
      } catch (error) {
        counts.violations.push(`seed ${seed} (conversation ${index}): ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    await backend.stop();
    process.off("unhandledRejection", onUnhandled);
    process.off("uncaughtException", onUnhandled);
  }
  if (backend.model.strayRequests > 0) counts.violations.push(`${backend.model.strayRequests} model requests named no soak turn`);
  return { ...counts, kind: options.kind, masterSeed: options.masterSeed, seeds, durationMs: Date.now() - started };
}

/** The one line that replays a conversation: its seed on one backend. */
export function replayCommand(kind: SoakBackendKind, seed: number): string {
  return `npm run soak:conversations -- --backend ${kind} --replay ${seed} --concurrency 1`;
}
