/**
 * Benchmark 4: many pending calls in one session — memory per pending call
 * and the time `close()` takes to settle all of them, at 1k, 10k and 100k,
 * against a minimal baseline holding the same calls. Each measurement runs in
 * a fresh process (bench/processes/scale-worker.ts, `--expose-gc`).
 */
import { BenchChild } from "../harness/child-process.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { formatBytes, formatMillis, ratio, summarize } from "../harness/stats.js";
import type { ScaleMeasurement } from "../processes/scale-worker.js";

export interface ScaleConfig {
  counts: number[];
  /** Fresh-process repetitions per (variant, count); the median is reported. */
  repetitions: number;
}

export const fullScaleConfig: ScaleConfig = { counts: [1_000, 10_000, 100_000], repetitions: 3 };
export const quickScaleConfig: ScaleConfig = { counts: [200, 1_000], repetitions: 1 };

type Variant = "toolrelay" | "toolrelay-ignore" | "baseline";
const VARIANTS: readonly Variant[] = ["baseline", "toolrelay", "toolrelay-ignore"];

async function measure(variant: Variant, count: number): Promise<ScaleMeasurement> {
  const worker = new BenchChild("bench/processes/scale-worker.ts", { nodeFlags: ["--expose-gc", "--max-old-space-size=4096"] });
  try {
    await worker.ready;
    const answer = await worker.request("measure", { variant, count }, 180_000);
    return answer.result as ScaleMeasurement;
  } finally {
    await worker.stop();
  }
}

function median(values: number[]): number {
  return summarize(values).p50;
}

export async function runScale(config: ScaleConfig, log: Log): Promise<SuiteResult> {
  const started = performance.now();
  const figures: Record<string, Record<number, ScaleMeasurement[]>> = { toolrelay: {}, "toolrelay-ignore": {}, baseline: {} };
  for (let repetition = 0; repetition < config.repetitions; repetition++) {
    for (const count of config.counts) {
      for (const variant of repetition % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
        const result = await measure(variant, count);
        if (result.responses !== count)
          throw new Error(`scale: ${variant} wrote ${result.responses} responses for ${count} calls on close`);
        const byCount = figures[variant]!;
        byCount[count] = [...(byCount[count] ?? []), result];
      }
    }
    log(`scale: repetition ${repetition + 1}/${config.repetitions} done`);
  }
  const rows: ResultRow[] = [];
  const largest = Math.max(...config.counts);
  const smallest = Math.min(...config.counts);
  const med = (variant: string, count: number, field: keyof ScaleMeasurement) =>
    median(figures[variant]![count]!.map((entry) => entry[field] as number));
  for (const count of config.counts) {
    const sdkBytes = med("toolrelay", count, "bytesPerCall");
    const ignoreBytes = med("toolrelay-ignore", count, "bytesPerCall");
    const baseBytes = med("baseline", count, "bytesPerCall");
    rows.push({
      section: "4. Scale",
      measure: `memory per pending call (tool holds its signal), ${count.toLocaleString("en-US")} pending`,
      baselineName: "Map of AbortControllers",
      baselineValue: formatBytes(baseBytes),
      candidateName: "toolrelay",
      candidateValue: formatBytes(sdkBytes),
      ratio: ratio(sdkBytes, baseBytes),
      goal: count === largest ? { text: "≤ 1.2×", met: sdkBytes <= 1.2 * baseBytes } : undefined,
    });
    rows.push({
      section: "4. Scale",
      measure: `memory per pending call (tool never reads its signal), ${count.toLocaleString("en-US")} pending`,
      baselineName: "Map of AbortControllers",
      baselineValue: formatBytes(baseBytes),
      candidateName: "toolrelay",
      candidateValue: formatBytes(ignoreBytes),
      ratio: ratio(ignoreBytes, baseBytes),
      goal: count === largest ? { text: "≤ 1 KiB (absolute)", met: ignoreBytes <= 1024 } : undefined,
    });
  }
  for (const count of config.counts) {
    const sdkClose = med("toolrelay", count, "closeMs");
    const baseClose = med("baseline", count, "closeMs");
    const sdkAll = med("toolrelay", count, "allSettledMs");
    rows.push({
      section: "4. Scale",
      measure: `close() settles ${count.toLocaleString("en-US")} pending`,
      baselineName: "abort + respond each",
      baselineValue: formatMillis(baseClose),
      candidateName: "toolrelay",
      candidateValue: formatMillis(sdkClose),
      ratio: ratio(sdkClose, baseClose),
      goal: count === largest ? { text: "≤ 1.0×", met: sdkClose <= baseClose } : undefined,
      note: `every handler settled after ${formatMillis(sdkAll)}; accepting the flood took ${formatMillis(med("toolrelay", count, "floodMs"))} (baseline ${formatMillis(med("baseline", count, "floodMs"))})`,
    });
  }
  const growth = (variant: string, field: keyof ScaleMeasurement) => med(variant, largest, field) / med(variant, smallest, field);
  return {
    name: "scale",
    rows,
    notes: [
      `In-process, one fresh Node process per measurement (bench/processes/scale-worker.ts, \`--expose-gc\`), median of ${config.repetitions}. The session's backend is \`{ kind: "link" }\` with a bench link that has no socket but decodes every request from its JSON text with the SDK's \`decodeFrame\` and encodes every response with \`encodeFrame\`, as the local link does. After 2,000 completed warm-up calls, N requests for a tool that never resolves until its signal aborts are delivered (\`toolrelay-ignore\`: a tool that never reads its signal and never resolves); memory = heapUsed after − before the flood (each after four \`global.gc()\`), ÷ N. Then \`session.close()\` is timed; every pending call must be answered (N responses written).`,
      `Baseline: the minimal way to hold the same calls — \`JSON.parse\`, a Map from request id to an AbortController, the same never-resolving handler; closing aborts each controller and writes a \`cancelled\` response.`,
      `Growth from ${smallest.toLocaleString("en-US")} to ${largest.toLocaleString("en-US")} pending (×${largest / smallest}): toolrelay close time ×${growth("toolrelay", "closeMs").toFixed(1)}, memory per call ×${growth("toolrelay", "bytesPerCall").toFixed(2)}; baseline close time ×${growth("baseline", "closeMs").toFixed(1)}.`,
    ],
    seconds: (performance.now() - started) / 1000,
    details: figures,
  };
}
