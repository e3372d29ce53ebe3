/**
 * Benchmark 7: a victim tenant's round trip through the relay while another tenant floods it,
 * against the victim's quiet round trip measured just before in the same run. The relay runs in
 * its own process (the CLI from packages/toolrelay/src/, two tenants), the flooder in another (pre-masked frames
 * written as fast as TCP takes them), the victim's listener and SDK client here
 * (test/relay/support/flood-harness.ts, the same measurement test/reliability/security-flood
 * asserts on). Two floods: 100,000 small frames, and 16 frames of 8 MiB.
 */
import { measureFloodRatio, type FloodRatioResult } from "../../test/relay/support/flood-harness.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { formatMillis } from "../harness/stats.js";

export interface RelayFloodConfig {
  smallFrames: number;
  largeFrames: number;
  largeFrameBytes: number;
  quietRoundTrips: number;
  /** Fresh runs per flood; the run with the median ratio is reported. */
  repetitions: number;
}

export const fullRelayFloodConfig: RelayFloodConfig = {
  smallFrames: 100_000,
  largeFrames: 16,
  largeFrameBytes: 8 * 1024 * 1024,
  quietRoundTrips: 2_000,
  repetitions: 3,
};
export const quickRelayFloodConfig: RelayFloodConfig = {
  smallFrames: 2_000,
  largeFrames: 2,
  largeFrameBytes: 1024 * 1024,
  quietRoundTrips: 100,
  repetitions: 1,
};

function medianRun(runs: FloodRatioResult[]): FloodRatioResult {
  return [...runs].sort((a, b) => a.ratio - b.ratio)[Math.floor(runs.length / 2)]!;
}

function row(measure: string, result: FloodRatioResult, runs: FloodRatioResult[], goal: boolean): ResultRow {
  return {
    section: "7. Relay under a flood",
    measure,
    baselineName: "victim round trip p99, relay quiet",
    baselineValue: formatMillis(result.quiet.p99),
    candidateName: "victim round trip p99 during the flood",
    candidateValue: formatMillis(result.flood.p99),
    ratio: result.ratio,
    ...(goal ? { goal: { text: "≤ 5×", met: result.ratio <= 5 } } : {}),
    note: `p50 ${formatMillis(result.quiet.p50)} → ${formatMillis(result.flood.p50)}, max during ${formatMillis(result.flood.max)}; ${result.forwarded} flood frames forwarded in ${formatMillis(result.floodMs)}; ratios of ${runs.length} runs: ${runs.map((run) => run.ratio.toFixed(2)).join(", ")}`,
  };
}

export async function runRelayFlood(config: RelayFloodConfig, log: Log): Promise<SuiteResult> {
  const started = performance.now();
  const small: FloodRatioResult[] = [];
  const large: FloodRatioResult[] = [];
  for (let repetition = 0; repetition < config.repetitions; repetition++) {
    small.push(await measureFloodRatio({ frames: config.smallFrames, quietRoundTrips: config.quietRoundTrips, log }));
    large.push(
      await measureFloodRatio({
        frames: config.largeFrames,
        padBytes: config.largeFrameBytes,
        quietRoundTrips: config.quietRoundTrips,
        warmup: 100,
        log,
      }),
    );
    log(`relay flood: run ${repetition + 1} of ${config.repetitions} done`);
  }
  const smallResult = medianRun(small);
  const largeResult = medianRun(large);
  return {
    name: "relay-flood",
    rows: [
      row(`p99 during ${config.smallFrames.toLocaleString("en")} small frames from another tenant`, smallResult, small, true),
      row(
        `p99 during ${config.largeFrames} frames of ${config.largeFrameBytes / (1024 * 1024)} MiB from another tenant`,
        largeResult,
        large,
        false,
      ),
    ],
    notes: [
      "Relay under a flood: four processes on loopback — the reference relay (CLI from packages/toolrelay/src/ through tsx, two tenants, one-socket listener mode, heartbeat off), the flooding tenant (test/relay/support/flood-process.ts: registers its own environment, a raw listener socket that discards, a raw SDK status socket bound to its runtime, writes pre-masked `sync` frames as fast as TCP takes them), and in the bench process the victim tenant's listener (answers `sync` with `sync_response`) and SDK client (one `sync` at a time, every `seq` acked).",
      `Quiet: ${config.quietRoundTrips} victim round trips after a warm-up; then victim round trips for as long as the flood lasts (until the relay has forwarded every flood frame to the flooder's own listener). Ratio = p99 during ÷ quiet p99, in the same run; ${config.repetitions} fresh runs per flood, the median ratio reported. The large-frame row has no goal: ws reassembles and unmasks each client frame in one piece (about 4 ms per MiB without the optional bufferutil addon) and the kernel copies it in one write; the relay's own work on a frame is sliced (docs/relay.md "Fairness").`,
    ],
    seconds: (performance.now() - started) / 1000,
    details: { small, large },
  };
}
