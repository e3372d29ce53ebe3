/**
 * Interleaved measurement rounds against the runtime-side process: every
 * variant (a client label) gets the same number of samples, rounds rotate the
 * order, and a warm-up per variant is thrown away first — so the noise of a
 * shared machine falls on all variants alike.
 */
import type { BenchChild } from "./child-process.js";
import { rotate } from "./stats.js";

export interface LatencyRounds {
  warmupIterations: number;
  rounds: number;
  iterationsPerRound: number;
}

/** Sequential round trips (µs) per label, pooled over rounds. `beforeBatch`/`afterBatch` wrap each batch. */
export async function latencyRounds(
  runtime: BenchChild,
  labels: readonly string[],
  config: LatencyRounds,
  hooks: { beforeBatch?(label: string): void; afterBatch?(label: string): void } = {},
): Promise<Map<string, number[]>> {
  for (const label of labels) await runtime.request("latency", { label, iterations: config.warmupIterations });
  const samples = new Map<string, number[]>(labels.map((label) => [label, []]));
  for (let round = 0; round < config.rounds; round++) {
    for (const label of rotate(labels, round)) {
      hooks.beforeBatch?.(label);
      const answer = await runtime.request("latency", { label, iterations: config.iterationsPerRound });
      hooks.afterBatch?.(label);
      const batch = samples.get(label)!;
      for (const value of answer.samples as Float64Array) batch.push(value);
    }
  }
  return samples;
}

export interface ThroughputRounds {
  rounds: number;
  inFlight: number;
  /** Calls per batch for a label. */
  batchSize(label: string): number;
}

/** Batch rates (calls/s) and per-call latencies under load (µs), per label. One warm-up batch each first. */
export async function throughputRounds(
  runtime: BenchChild,
  labels: readonly string[],
  config: ThroughputRounds,
): Promise<{ rates: Map<string, number[]>; loaded: Map<string, number[]> }> {
  const rates = new Map<string, number[]>(labels.map((label) => [label, []]));
  const loaded = new Map<string, number[]>(labels.map((label) => [label, []]));
  if (config.rounds === 0) return { rates, loaded };
  for (const label of labels) await runtime.request("throughput", { label, total: config.batchSize(label), inFlight: config.inFlight });
  for (let round = 0; round < config.rounds; round++) {
    for (const label of rotate(labels, round)) {
      const total = config.batchSize(label);
      const answer = await runtime.request("throughput", { label, total, inFlight: config.inFlight });
      rates.get(label)!.push(total / ((answer.elapsedMs as number) / 1000));
      const batch = loaded.get(label)!;
      for (const value of answer.samples as Float64Array) batch.push(value);
    }
  }
  return { rates, loaded };
}
