/**
 * Small statistics for the benchmarks: percentiles over samples, and ratios
 * of a candidate against a baseline measured in the same run.
 */

/** p50 / p99 (and friends) of a set of samples, in the samples' unit. */
export interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** The `q`-quantile (0..1) of ascending `sorted` samples, nearest-rank. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = Float64Array.from(samples).sort();
  const values = Array.from(sorted);
  let total = 0;
  for (const value of values) total += value;
  return {
    count: values.length,
    p50: quantile(values, 0.5),
    p90: quantile(values, 0.9),
    p99: quantile(values, 0.99),
    mean: values.length > 0 ? total / values.length : Number.NaN,
    min: values[0] ?? Number.NaN,
    max: values[values.length - 1] ?? Number.NaN,
  };
}

/** candidate ÷ baseline (NaN when either is missing or the baseline is 0). */
export function ratio(candidate: number, baseline: number): number {
  if (!Number.isFinite(candidate) || !Number.isFinite(baseline) || baseline === 0) return Number.NaN;
  return candidate / baseline;
}

export function formatRatio(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (value !== 0 && Math.abs(value) < 0.1) return `${value.toPrecision(2)}×`;
  return `${value.toFixed(2)}×`;
}

/** Microseconds, with a unit that fits. */
export function formatMicros(micros: number): string {
  if (!Number.isFinite(micros)) return "n/a";
  if (micros >= 10_000) return `${(micros / 1000).toFixed(1)} ms`;
  if (micros >= 1000) return `${(micros / 1000).toFixed(2)} ms`;
  return `${micros.toFixed(0)} µs`;
}

export function formatMillis(millis: number): string {
  if (!Number.isFinite(millis)) return "n/a";
  if (millis >= 100) return `${millis.toFixed(0)} ms`;
  if (millis >= 10) return `${millis.toFixed(1)} ms`;
  return `${millis.toFixed(2)} ms`;
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "n/a";
  if (Math.abs(bytes) >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (Math.abs(bytes) >= 1024) return `${(bytes / 1024).toFixed(2)} KiB`;
  return `${bytes.toFixed(0)} B`;
}

export function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return "n/a";
  if (perSecond >= 1000) return `${(perSecond / 1000).toFixed(1)} k/s`;
  return `${perSecond.toFixed(0)} /s`;
}

/** Rotate `items` by `round` places: interleaves variants so none always runs first. */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const shift = round % Math.max(1, items.length);
  return [...items.slice(shift), ...items.slice(0, shift)];
}
