/**
 * Benchmarks 1–3: round trip, throughput with 256 calls in flight, and the
 * SDK forwarding to an MCP stdio server — all against the same minimal raw-`ws`
 * baseline, with the runtime side in another process on loopback
 * (bench/processes/runtime-side.ts). All clients are connected at once and
 * measured in interleaved rounds (bench/harness/rounds.ts).
 */
import { BenchChild } from "../harness/child-process.js";
import { startBaselineClient, startSdkClient, startSdkMcpClient, type BenchClient } from "../harness/clients.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { latencyRounds, throughputRounds } from "../harness/rounds.js";
import { formatMicros, formatRate, ratio, summarize, type Summary } from "../harness/stats.js";
import { timedWebSocketClass, type HandlingRecorder } from "../harness/timed-web-socket.js";

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
  /** Include the in-process handling time (two more, instrumented connections). */
  handling: boolean;
}

export const fullRoundTripConfig: RoundTripConfig = {
  warmupIterations: 2_000,
  rounds: 12,
  iterationsPerRound: 1_500,
  inFlight: 256,
  throughputCalls: 20_000,
  mcpThroughputCalls: 4_000,
  throughputRounds: 8,
  mcp: true,
  handling: true,
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
  handling: true,
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

    // In-process handling time first, on two instrumented connections kept off the end-to-end figures;
    // it also sets the busy-wait of the control variant below.
    let handling: { base: Summary; sdk: Summary } | undefined;
    if (config.handling) {
      const timedBaseline = timedWebSocketClass();
      const timedSdk = timedWebSocketClass();
      clients.push(await startBaselineClient(url, "baseline-timed", { WebSocket: timedBaseline.WebSocket }));
      clients.push(await startSdkClient(url, "toolrelay-timed", { WebSocket: timedSdk.WebSocket }));
      const recorders = new Map<string, HandlingRecorder>([
        ["baseline-timed", timedBaseline.recorder],
        ["toolrelay-timed", timedSdk.recorder],
      ]);
      const pooled = new Map<string, number[]>([...recorders.keys()].map((label) => [label, []]));
      await latencyRounds(runtime, [...recorders.keys()], config, {
        beforeBatch: (label) => recorders.get(label)!.reset(),
        afterBatch: (label) => pooled.get(label)!.push(...recorders.get(label)!.samples),
      });
      handling = { base: summarize(pooled.get("baseline-timed")!), sdk: summarize(pooled.get("toolrelay-timed")!) };
      log(`handling time: ${config.rounds} rounds done`);
    }
    // Control: the raw handler burning, per call, the CPU time the SDK adds (handling p50 difference).
    const spinMicros = handling ? Math.max(0, handling.sdk.p50 - handling.base.p50) : 0;
    if (handling) clients.push(await startBaselineClient(url, "baseline+spin", { spinMicros: () => spinMicros }));
    const latencyLabels = handling ? [...labels, "baseline+spin"] : labels;

    const latency = await latencyRounds(runtime, latencyLabels, config);
    log(`round trip: ${config.rounds} rounds × ${config.iterationsPerRound} per client done`);

    const { rates, loaded } = await throughputRounds(runtime, labels, {
      rounds: config.throughputRounds,
      inFlight: config.inFlight,
      batchSize: (label) => (label === "toolrelay+mcp" ? config.mcpThroughputCalls : config.throughputCalls),
    });
    log(`throughput: ${config.throughputRounds} rounds done`);

    const figures = new Map<string, VariantFigures>(
      labels.map((label) => [
        label,
        {
          latency: summarize(latency.get(label)!),
          rates: rates.get(label)!,
          rate: summarize(rates.get(label)!),
          loaded: summarize(loaded.get(label)!),
        },
      ]),
    );
    return {
      name: "round-trip",
      rows: [
        ...roundTripRows(figures, config),
        ...(handling
          ? handlingRows(
              handling.base,
              handling.sdk,
              summarize(latency.get("baseline+spin")!),
              figures.get("baseline")!.latency,
              spinMicros,
            )
          : []),
      ],
      notes: [
        `Runtime side: bench/processes/runtime-side.ts, a separate Node process with a \`ws\` server on 127.0.0.1 that answers \`runtime_start\` like the app-server, sends \`external_tool_call_request\` frames (distinct \`tool_call_id\`s, input \`{}\`) and times each until its \`external_tool_call_response\` arrives (\`process.hrtime\`). All clients are connected to it at once; ${config.rounds} rounds alternate between them in rotating order, ${config.iterationsPerRound} sequential round trips per client per round, after ${config.warmupIterations} warm-up round trips each; samples are pooled.`,
        'Baseline: a raw `ws` client in the bench process — `JSON.parse`, call the no-op, `JSON.stringify` the response, `send`; no validation (bench/harness/clients.ts). toolrelay: `createSession({ backend: { kind: "local", url } })` with a `defineTool` no-op (zod input `z.object({})`). toolrelay → MCP stdio: the same session whose tool calls an MCP stdio server child process (`@modelcontextprotocol/sdk` 1.32 `Client` + `StdioClientTransport`, bench/processes/mcp-noop-server.mjs).',
        `Throughput: the runtime side keeps ${config.inFlight} calls in flight on one connection (a new call as each answer arrives), ${config.throughputCalls} calls per batch (${config.mcpThroughputCalls} for the MCP variant), ${config.throughputRounds} batches per client in rotating order after one warm-up batch each; the figure is the median batch rate.`,
        ...(config.handling
          ? [
              "Control: a third raw handler that busy-waits, on every call, the SDK's extra handling time (toolrelay − baseline handling p50) before answering, measured in the same latency rounds. It shows what that much CPU time per call costs end to end on this machine whoever spends it: on this 2-vCPU VM a reply that comes a few tens of µs later seems to find the runtime side's CPU idle and pays for waking it, so the end-to-end ratio grows faster than the CPU time.",
              "In-process handling time: two further connections whose `ws` WebSocket subclass (bench/harness/timed-web-socket.ts; the SDK takes it as `backend.WebSocket`) reads `process.hrtime` when a request is handed to the socket's `message` listeners and when the matching response is given to `send()` — the client's own work per call (decode, validate, dispatch, run the tool, encode) without the network, the kernel or the runtime side. Same rounds as the round trip.",
            ]
          : []),
      ],
      seconds: (performance.now() - started) / 1000,
      details: {
        ...Object.fromEntries(
          [...figures].map(([label, value]) => [
            label,
            { latencyMicros: value.latency, ratesPerSecond: value.rates, loadedLatencyMicros: value.loaded },
          ]),
        ),
        ...(handling
          ? {
              handlingMicros: { baseline: handling.base, toolrelay: handling.sdk },
              controlSpinMicros: spinMicros,
              controlLatencyMicros: summarize(latency.get("baseline+spin")!),
            }
          : {}),
      },
    };
  } finally {
    for (const client of clients.reverse()) await client.close().catch(() => undefined);
    await runtime.stop();
  }
}

function roundTripRows(figures: Map<string, VariantFigures>, config: RoundTripConfig): ResultRow[] {
  const base = figures.get("baseline")!;
  const rows: ResultRow[] = [];
  const candidates: Array<[label: string, name: string, hasGoals: boolean]> = [
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
      note: `${figure.latency.count} round trips each`,
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
    if (figure.rates.length === 0) continue;
    const rate = ratio(figure.rate.p50, base.rate.p50);
    rows.push({
      section: hasGoals ? "2. Throughput" : section,
      measure: `throughput, ${config.inFlight} in flight`,
      baselineName: "raw ws handler",
      baselineValue: formatRate(base.rate.p50),
      candidateName: name,
      candidateValue: formatRate(figure.rate.p50),
      ratio: rate,
      goal: hasGoals ? { text: "≥ 0.9×", met: rate >= 0.9 } : undefined,
      note: `per-call latency under load: p50 ${formatMicros(figure.loaded.p50)} vs ${formatMicros(base.loaded.p50)}, p99 ${formatMicros(figure.loaded.p99)} vs ${formatMicros(base.loaded.p99)}`,
    });
  }
  return rows;
}

function handlingRows(base: Summary, sdk: Summary, control: Summary, baseLatency: Summary, spinMicros: number): ResultRow[] {
  const rows: ResultRow[] = (["p50", "p99"] as const).map((quantile) => ({
    section: "1. Round trip",
    measure: `in-process handling time ${quantile}`,
    baselineName: "raw ws handler",
    baselineValue: formatMicros(base[quantile]),
    candidateName: "toolrelay",
    candidateValue: formatMicros(sdk[quantile]),
    ratio: ratio(sdk[quantile], base[quantile]),
    note: quantile === "p50" ? `the SDK's own work: +${formatMicros(sdk.p50 - base.p50)} per call at p50 (${sdk.count} calls)` : undefined,
  }));
  rows.push({
    section: "1. Round trip",
    measure: `control: latency p50 of the raw handler busy-waiting ${formatMicros(spinMicros)} per call`,
    baselineName: "raw ws handler",
    baselineValue: formatMicros(baseLatency.p50),
    candidateName: "raw ws handler + spin",
    candidateValue: formatMicros(control.p50),
    ratio: ratio(control.p50, baseLatency.p50),
    note: `what the SDK's extra CPU time per call costs end to end on this machine, whoever spends it (p99 ${formatMicros(control.p99)})`,
  });
  return rows;
}
