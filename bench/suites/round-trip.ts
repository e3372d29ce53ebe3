/**
 * Benchmarks 1–3: round trip, throughput with 256 calls in flight, and the
 * SDK forwarding to an MCP stdio server — all against the same minimal raw-`ws`
 * baseline, with the runtime side in another process on loopback.
 *
 * Every variant is connected to the same runtime-side process at once; rounds
 * alternate between them (rotating the order) so that the noise of a shared
 * machine falls on all of them alike. Samples of all rounds are pooled after a
 * warm-up that is thrown away.
 */
import { BenchChild } from "../harness/child-process.js";
import { startBaselineClient, startSdkClient, startSdkMcpClient, type BenchClient } from "../harness/clients.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { formatMicros, formatRate, formatRatio, ratio, rotate, summarize, type Summary } from "../harness/stats.js";

export interface RoundTripConfig {
  /** Round trips per variant thrown away first. */
  warmupIterations: number;
  /** Alternating rounds. */
  rounds: number;
  /** Round trips per variant per round. */
  iterationsPerRound: number;
  /** Calls in flight for the throughput benchmark. */
  inFlight: number;
  /** Calls per throughput batch (per variant, per round). */
  throughputCalls: number;
  /** Calls per throughput batch for the MCP variant (it is several times slower). */
  mcpThroughputCalls: number;
  /** Throughput rounds (one batch per variant each, after one warm-up batch). */
  throughputRounds: number;
  /** Include the MCP comparison (benchmark 3). */
  mcp: boolean;
}

export const fullRoundTripConfig: RoundTripConfig = {
  warmupIterations: 2_000,
  rounds: 12,
  iterationsPerRound: 1_500,
  inFlight: 256,
  throughputCalls: 20_000,
  mcpThroughputCalls: 5_000,
  throughputRounds: 8,
  mcp: true,
};

export const quickRoundTripConfig: RoundTripConfig = {
  warmupIterations: 20,
  rounds: 2,
  iterationsPerRound: 20,
  inFlight: 16,
  throughputCalls: 64,
  mcpThroughputCalls: 32,
  throughputRounds: 1,
  mcp: true,
};

interface VariantFigures {
  latency: Summary;
  /** Calls per second of each throughput batch. */
  rates: number[];
  rate: Summary;
  /** Per-call latency under load. */
  loaded: Summary;
}

export async function runRoundTrip(config: RoundTripConfig, log: Log): Promise<SuiteResult> {
  const started = performance.now();
  const runtime = new BenchChild("bench/processes/runtime-side.ts");
  const clients: BenchClient[] = [];
  try {
    const { url } = (await runtime.ready) as unknown as { url: string };
    clients.push(await startBaselineClient(url, "baseline"));
    clients.push(await startSdkClient(url, "toolrelay"));
    if (config.mcp) clients.push(await startSdkMcpClient(url, "toolrelay+mcp"));
    const labels = clients.map((client) => client.label);

    log(`round trip: warm-up ${config.warmupIterations} per variant`);
    for (const label of labels) await runtime.request("latency", { label, iterations: config.warmupIterations });
    const latency = new Map<string, number[]>(labels.map((label) => [label, []]));
    for (let round = 0; round < config.rounds; round++) {
      for (const label of rotate(labels, round)) {
        const answer = await runtime.request("latency", { label, iterations: config.iterationsPerRound });
        latency.get(label)!.push(...(answer.samples as Float64Array));
      }
    }
    log(`round trip: ${config.rounds} rounds × ${config.iterationsPerRound} done`);

    const batchSize = (label: string) => (label === "toolrelay+mcp" ? config.mcpThroughputCalls : config.throughputCalls);
    if (config.throughputRounds > 0) for (const label of labels) await runtime.request("throughput", { label, total: batchSize(label), inFlight: config.inFlight });
    const rates = new Map<string, number[]>(labels.map((label) => [label, []]));
    const loaded = new Map<string, number[]>(labels.map((label) => [label, []]));
    for (let round = 0; round < config.throughputRounds; round++) {
      for (const label of rotate(labels, round)) {
        const total = batchSize(label);
        const answer = await runtime.request("throughput", { label, total, inFlight: config.inFlight });
        rates.get(label)!.push(total / ((answer.elapsedMs as number) / 1000));
        loaded.get(label)!.push(...(answer.samples as Float64Array));
      }
    }
    log(`throughput: ${config.throughputRounds} rounds done`);

    const figures = new Map<string, VariantFigures>(
      labels.map((label) => [
        label,
        { latency: summarize(latency.get(label)!), rates: rates.get(label)!, rate: summarize(rates.get(label)!), loaded: summarize(loaded.get(label)!) },
      ]),
    );
    return {
      name: "round-trip",
      rows: roundTripRows(figures, config),
      notes: [
        `Runtime side: bench/processes/runtime-side.ts, a separate Node process with a \`ws\` server on 127.0.0.1. It sends \`external_tool_call_request\` frames (distinct \`tool_call_id\`s) and times each until its \`external_tool_call_response\` arrives (process.hrtime). All clients are connected to it at once; ${config.rounds} rounds alternate between them in rotating order, ${config.iterationsPerRound} sequential round trips per client per round after ${config.warmupIterations} warm-up round trips each; samples are pooled.`,
        "Baseline: a raw `ws` client in the bench process — `JSON.parse`, call the no-op, `JSON.stringify` the response, `send`; no validation (bench/harness/clients.ts). toolrelay: `createSession({ backend: { kind: \"local\", url } })` with a `defineTool` no-op (zod input `z.object({})`). toolrelay+mcp: the same session whose tool calls an MCP stdio server child process (`@modelcontextprotocol/sdk` Client + StdioClientTransport, bench/processes/mcp-noop-server.ts).",
        `Throughput: the runtime side keeps ${config.inFlight} calls in flight on one connection (a new call as each answer arrives), ${config.throughputCalls} calls per batch (${config.mcpThroughputCalls} for +mcp), ${config.throughputRounds} batches per client after one warm-up batch; the figure is the median batch rate (calls/s).`,
      ],
      seconds: (performance.now() - started) / 1000,
      details: Object.fromEntries([...figures].map(([label, value]) => [label, { latencyMicros: value.latency, ratesPerSecond: value.rates, loadedLatencyMicros: value.loaded }])),
    };
  } finally {
    for (const client of clients.reverse()) await client.close().catch(() => undefined);
    await runtime.stop();
  }
}

function roundTripRows(figures: Map<string, VariantFigures>, config: RoundTripConfig): ResultRow[] {
  const base = figures.get("baseline")!;
  const rows: ResultRow[] = [];
  const candidates: Array<[string, string, boolean]> = [
    ["toolrelay", "toolrelay", true],
    ["toolrelay+mcp", "toolrelay → MCP stdio", false],
  ];
  for (const [label, name, hasGoals] of candidates) {
    const figure = figures.get(label);
    if (!figure) continue;
    const section = hasGoals ? "1. Round trip" : "3. vs MCP stdio";
    const p50 = ratio(figure.latency.p50, base.latency.p50);
    const p99 = ratio(figure.latency.p99, base.latency.p99);
    rows.push({
      section,
      measure: "latency p50",
      baselineName: "raw ws handler",
      baselineValue: formatMicros(base.latency.p50),
      candidateName: name,
      candidateValue: formatMicros(figure.latency.p50),
      ratio: p50,
      goal: hasGoals ? { text: "≤ 1.15×", met: p50 <= 1.15 } : undefined,
      note: `${figure.latency.count} samples`,
    });
    rows.push({
      section,
      measure: "latency p99",
      baselineName: "raw ws handler",
      baselineValue: formatMicros(base.latency.p99),
      candidateName: name,
      candidateValue: formatMicros(figure.latency.p99),
      ratio: p99,
      goal: hasGoals ? { text: "≤ 1.3×", met: p99 <= 1.3 } : undefined,
    });
    const rate = ratio(figure.rate.p50, base.rate.p50);
    rows.push({
      section: hasGoals ? "2. Throughput" : section,
      measure: `throughput, ${config.inFlight} in flight (median batch)`,
      baselineName: "raw ws handler",
      baselineValue: formatRate(base.rate.p50),
      candidateName: name,
      candidateValue: formatRate(figure.rate.p50),
      ratio: rate,
      goal: hasGoals ? { text: "≥ 0.9×", met: rate >= 0.9 } : undefined,
      note: `per-call latency under load p50 ${formatMicros(figure.loaded.p50)} vs ${formatMicros(base.loaded.p50)}, p99 ${formatMicros(figure.loaded.p99)} vs ${formatMicros(base.loaded.p99)}`,
    });
  }
  return rows;
}

export { formatRatio };
