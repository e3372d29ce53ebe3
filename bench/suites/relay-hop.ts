/**
 * Benchmark 5: the relay hop. Three processes on loopback — the runtime side
 * (bench/processes/runtime-side.ts), the hop (bench/processes/hop-side.ts: the
 * reference relay from packages/relay/src and a raw forwarder), and the clients in the
 * bench process:
 *
 * - baseline: the raw `ws` handler → raw two-hop forward (pipes text both
 *   ways, no parsing) → runtime side;
 * - toolrelay (local backend) → the same raw forward (the SDK's share);
 * - toolrelay (cloud backend) → the reference relay → runtime side, registered
 *   with the relay as a Letta Code listener (one-socket mode).
 */
import { BenchChild } from "../harness/child-process.js";
import { noopTool, startBaselineClient, startSdkClient, type BenchClient } from "../harness/clients.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { latencyRounds, throughputRounds } from "../harness/rounds.js";
import { createSession } from "../harness/sdk.js";
import { formatMicros, formatRate, ratio, summarize } from "../harness/stats.js";
import { RELAY_BENCH_KEY } from "../processes/relay-bench-key.js";

export interface RelayHopConfig {
  warmupIterations: number;
  rounds: number;
  iterationsPerRound: number;
  inFlight: number;
  throughputCalls: number;
  throughputRounds: number;
}

export const fullRelayHopConfig: RelayHopConfig = {
  warmupIterations: 1_000,
  rounds: 8,
  iterationsPerRound: 1_000,
  inFlight: 256,
  throughputCalls: 10_000,
  throughputRounds: 4,
};

export const quickRelayHopConfig: RelayHopConfig = {
  warmupIterations: 10,
  rounds: 1,
  iterationsPerRound: 20,
  inFlight: 8,
  throughputCalls: 32,
  throughputRounds: 1,
};

const PENDING_NOTE = "pending: relay not yet available";

/** The rows to show when the relay cannot be started (so the table says so). */
export function pendingRelayResult(reason: string, seconds: number): SuiteResult {
  return {
    name: "relay-hop",
    rows: [
      {
        section: "5. Relay hop",
        measure: "latency p50 through the relay",
        baselineName: "raw two-hop forward",
        baselineValue: "—",
        candidateName: "toolrelay via relay",
        candidateValue: "—",
        ratio: Number.NaN,
        goal: { text: "≤ 1.3×", met: false },
        note: `${PENDING_NOTE} (${reason.split("\n")[0]!.slice(0, 160)})`,
      },
    ],
    notes: [`**${PENDING_NOTE}**: ${reason.split("\n")[0]}`],
    seconds,
  };
}

export async function runRelayHop(config: RelayHopConfig, log: Log): Promise<SuiteResult> {
  const started = performance.now();
  const runtime = new BenchChild("bench/processes/runtime-side.ts");
  let hop: BenchChild | undefined;
  const clients: BenchClient[] = [];
  try {
    const { url } = (await runtime.ready) as unknown as { url: string };
    try {
      hop = new BenchChild("bench/processes/hop-side.ts", { args: [url] });
      await hop.ready;
    } catch (error) {
      return pendingRelayResult(error instanceof Error ? error.message : String(error), (performance.now() - started) / 1000);
    }
    const { relayHttpUrl, forwardUrl } = (await hop.ready) as unknown as { relayHttpUrl: string; forwardUrl: string };
    clients.push(await startBaselineClient(forwardUrl, "baseline-fwd"));
    clients.push(await startSdkClient(forwardUrl, "toolrelay-fwd"));
    let relayLabel: string | undefined;
    try {
      const { connectionId } = (await runtime.request(
        "registerRelay",
        { httpUrl: relayHttpUrl, apiKey: RELAY_BENCH_KEY },
        20_000,
      )) as unknown as {
        connectionId: string;
      };
      const session = await createSession({
        backend: { kind: "cloud", apiKey: RELAY_BENCH_KEY, baseUrl: relayHttpUrl, environment: { connectionId } },
        agent: { id: "agent-bench" },
        tools: [noopTool],
        clientInfo: { name: "toolrelay-relay" },
        requestTimeoutMs: 10_000,
      });
      clients.push({ label: "toolrelay-relay", close: () => session.close() });
      relayLabel = "toolrelay-relay";
    } catch (error) {
      return pendingRelayResult(
        `the relay did not carry a session: ${error instanceof Error ? error.message : String(error)}`,
        (performance.now() - started) / 1000,
      );
    }
    const labels = clients.map((client) => client.label);
    const latency = await latencyRounds(runtime, labels, config);
    log(`relay hop: ${config.rounds} latency rounds done`);
    const { rates } = await throughputRounds(runtime, labels, {
      rounds: config.throughputRounds,
      inFlight: config.inFlight,
      batchSize: () => config.throughputCalls,
    });
    log(`relay hop: ${config.throughputRounds} throughput rounds done`);
    const base = summarize(latency.get("baseline-fwd")!);
    const sdkForward = summarize(latency.get("toolrelay-fwd")!);
    const viaRelay = summarize(latency.get(relayLabel)!);
    const baseRate = summarize(rates.get("baseline-fwd")!).p50;
    const sdkForwardRate = summarize(rates.get("toolrelay-fwd")!).p50;
    const relayRate = summarize(rates.get(relayLabel)!).p50;
    const rows: ResultRow[] = [];
    for (const quantile of ["p50", "p99"] as const) {
      const value = ratio(viaRelay[quantile], base[quantile]);
      rows.push({
        section: "5. Relay hop",
        measure: `latency ${quantile} through the relay`,
        baselineName: "raw ws handler via raw forward",
        baselineValue: formatMicros(base[quantile]),
        candidateName: "toolrelay (cloud backend) via relay",
        candidateValue: formatMicros(viaRelay[quantile]),
        ratio: value,
        goal: quantile === "p50" ? { text: "≤ 1.3×", met: value <= 1.3 } : undefined,
        note: `toolrelay (local backend) via the raw forward: ${formatMicros(sdkForward[quantile])} (${ratio(sdkForward[quantile], base[quantile]).toFixed(2)}×); relay vs raw forward with the SDK on both: ${ratio(viaRelay[quantile], sdkForward[quantile]).toFixed(2)}×`,
      });
    }
    if (rates.get("baseline-fwd")!.length > 0) {
      rows.push({
        section: "5. Relay hop",
        measure: `throughput through the relay, ${config.inFlight} in flight`,
        baselineName: "raw ws handler via raw forward",
        baselineValue: formatRate(baseRate),
        candidateName: "toolrelay (cloud backend) via relay",
        candidateValue: formatRate(relayRate),
        ratio: ratio(relayRate, baseRate),
        note: `toolrelay (local backend) via the raw forward: ${formatRate(sdkForwardRate)} (${ratio(sdkForwardRate, baseRate).toFixed(2)}×)`,
      });
    }
    return {
      name: "relay-hop",
      rows,
      notes: [
        "Relay hop: three processes on loopback — the runtime side, the hop process (bench/processes/hop-side.ts) holding the reference relay (`startRelay` from packages/relay/src, one-socket listener mode, heartbeat off) and a raw two-hop forwarder (a `ws` server that opens one upstream socket per client and pipes text frames both ways untouched), and the clients in the bench process. The runtime side registers with the relay as a Letta Code listener (`POST /v1/environments/register`, then the listener socket); the SDK reaches it with `backend: { kind: \"cloud\", baseUrl: relay, environment: { connectionId } }` (two status sockets, `seq`/ack). Baseline: the raw handler through the raw forward. Also shown: the SDK's local backend through the same raw forward, which separates the SDK's share from the relay's.",
        `${config.rounds} interleaved rounds × ${config.iterationsPerRound} sequential round trips per client after ${config.warmupIterations} warm-up; throughput ${config.throughputRounds} batches of ${config.throughputCalls} with ${config.inFlight} in flight.`,
      ],
      seconds: (performance.now() - started) / 1000,
      details: { latencyMicros: { baseline: base, sdkForward, viaRelay }, ratesPerSecond: Object.fromEntries(rates) },
    };
  } finally {
    for (const client of clients.reverse()) await client.close().catch(() => undefined);
    await hop?.stop();
    await runtime.stop();
  }
}
