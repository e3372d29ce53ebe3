/**
 * Benchmark 9: the round trip a tool adds when it lives in another language,
 * behind `toolrelay-sidecar`. The runtime side (bench/processes/runtime-side.ts,
 * its own process) sends `external_tool_call_request`s one at a time and times
 * each until its response; the clients, all connected at once and measured in
 * the same interleaved rounds:
 *
 * - `toolrelay`: the TypeScript baseline, a `createSession` in this process with a `defineTool` no-op;
 * - `sidecar+node`: the sidecar (its own process) and a minimal host in this process answering its
 *   `tool_call` frames: the cost of the stdio hop and the frames alone;
 * - `sidecar+python-async`: a Python host (clients/python/benchmarks/noop_host.py) with an `async` no-op;
 * - `sidecar+python-sync`: the same with a plain function (the library runs it in a thread).
 *
 * The sidecar is the executable bundled from packages/toolrelay/src/sidecar/bin.ts by esbuild, as tsup builds it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { bodyCodec } from "../../packages/toolrelay/src/sidecar/frame-encoding.js";
import { FrameReader, frameBytes } from "../../packages/toolrelay/src/sidecar/frame-reader.js";
import { bundleLikeTsup } from "../harness/build-sdk.js";
import { BenchChild, REPO_ROOT } from "../harness/child-process.js";
import { startSdkClient, withDeadline, type BenchClient } from "../harness/clients.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { latencyRounds } from "../harness/rounds.js";
import { formatMicros, ratio, summarize, type Summary } from "../harness/stats.js";

export interface SidecarBenchConfig {
  warmupIterations: number;
  rounds: number;
  iterationsPerRound: number;
}

export const fullSidecarConfig: SidecarBenchConfig = { warmupIterations: 500, rounds: 10, iterationsPerRound: 600 };
export const quickSidecarConfig: SidecarBenchConfig = { warmupIterations: 10, rounds: 2, iterationsPerRound: 10 };

const VARIANTS = ["toolrelay", "sidecar+node", "sidecar+python-async", "sidecar+python-sync"] as const;

export async function runSidecarBench(config: SidecarBenchConfig, log: Log): Promise<SuiteResult> {
  const started = performance.now();
  const outdir = resolve(REPO_ROOT, "bench/.build", `sidecar-${process.pid}`);
  mkdirSync(outdir, { recursive: true });
  const runtime = new BenchChild("bench/processes/runtime-side.ts");
  const clients: BenchClient[] = [];
  try {
    const sidecarCommand = [process.execPath, await bundleLikeTsup("sidecar", "packages/toolrelay/src/sidecar/bin.ts", outdir)];
    const { url } = (await runtime.ready) as unknown as { url: string };
    clients.push(await startSdkClient(url, "toolrelay"));
    clients.push(await startNodeSidecarHost(url, "sidecar+node", sidecarCommand));
    clients.push(await startPythonHost(url, "sidecar+python-async", "async", sidecarCommand));
    clients.push(await startPythonHost(url, "sidecar+python-sync", "sync", sidecarCommand));
    const samples = await latencyRounds(runtime, VARIANTS, config);
    log(`sidecar: ${config.rounds} rounds × ${config.iterationsPerRound} per client done`);
    const figures = new Map(VARIANTS.map((label) => [label, summarize(samples.get(label)!)]));
    return {
      name: "sidecar",
      rows: rows(figures),
      notes: [
        `Runtime side: bench/processes/runtime-side.ts (its own process) sends one \`external_tool_call_request\` at a time to each client and times it until the response arrives; ${config.rounds} rounds rotate over the clients, ${config.iterationsPerRound} round trips each per round after ${config.warmupIterations} warm-up round trips; samples pooled.`,
        "Baseline: `toolrelay`, a `createSession` in the bench process whose `defineTool` no-op answers `ok`. Candidates: the same session run by `toolrelay-sidecar` (packages/toolrelay/src/sidecar/bin.ts bundled by esbuild as tsup builds it; JSON frames) in its own process, its host answering each `tool_call` with a `tool_result`: a minimal Node host in the bench process (`sidecar+node`: the stdio hop and the frames alone), or the Python library (clients/python, `python3 clients/python/benchmarks/noop_host.py`) with an `async def` no-op (runs on the event loop) or a plain `def` (run in a worker thread by the library).",
      ],
      seconds: (performance.now() - started) / 1000,
      details: Object.fromEntries([...figures].map(([label, summary]) => [label, { latencyMicros: summary }])),
    };
  } finally {
    for (const client of clients.reverse()) await client.close().catch(() => undefined);
    await runtime.stop();
    rmSync(outdir, { recursive: true, force: true });
  }
}

function rows(figures: Map<string, Summary>): ResultRow[] {
  const base = figures.get("toolrelay")!;
  const result: ResultRow[] = [];
  for (const label of VARIANTS.slice(1)) {
    const figure = figures.get(label)!;
    for (const [measure, key] of [
      ["latency p50", "p50"],
      ["latency p99", "p99"],
    ] as const) {
      result.push({
        section: "9. Sidecar",
        measure,
        baselineName: "TypeScript tool (in process)",
        baselineValue: formatMicros(base[key]),
        candidateName: label.replace("sidecar+", "sidecar → "),
        candidateValue: formatMicros(figure[key]),
        ratio: ratio(figure[key], base[key]),
        note: key === "p50" ? `adds ${formatMicros(figure.p50 - base.p50)} per call; ${figure.count} round trips each` : undefined,
      });
    }
  }
  return result;
}

/** The sidecar with a minimal host in this process: hello, one session, every tool_call answered `ok`. */
async function startNodeSidecarHost(url: string, label: string, command: string[]): Promise<BenchClient> {
  const child = spawn(command[0]!, command.slice(1), { stdio: ["pipe", "pipe", "inherit"], env: { PATH: process.env.PATH ?? "" } });
  const codec = bodyCodec("json");
  const reader = new FrameReader(16 * 1024 * 1024);
  const send = (frame: object): boolean => child.stdin!.write(frameBytes(codec.encode(frame)));
  const opened = new Promise<void>((resolveOpen, rejectOpen) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      for (const reading of reader.push(chunk)) {
        if (reading.kind !== "frame") continue;
        const decoded = codec.decode(reading.body);
        if (!decoded.ok) continue;
        const frame = decoded.value as { type: string; session?: string; call?: string; code?: string };
        if (frame.type === "tool_call")
          send({ type: "tool_result", session: frame.session, call: frame.call, content: [{ type: "text", text: "ok" }] });
        else if (frame.type === "session_opened") resolveOpen();
        else if (frame.type === "error") rejectOpen(new Error(`sidecar: ${frame.code}`));
      }
    });
  });
  send({ type: "hello", versions: [1] });
  send({
    type: "open_session",
    session: "bench",
    backend: { kind: "local", url },
    agent: { id: "agent-bench" },
    tools: [{ name: "noop", description: "Does nothing", input_schema: { type: "object" } }],
    options: { client_info: { name: label } },
  });
  await withDeadline(opened, 20_000, `${label} session`);
  return { label, close: () => stopChild(child, () => child.stdin!.end()) };
}

/** The Python host process (it starts its own sidecar). */
async function startPythonHost(url: string, label: string, mode: "async" | "sync", command: string[]): Promise<BenchClient> {
  const child = spawn(
    "python3",
    [resolve(REPO_ROOT, "clients/python/benchmarks/noop_host.py"), "--url", url, "--label", label, "--mode", mode],
    {
      stdio: ["pipe", "pipe", "inherit"],
      env: { PATH: process.env.PATH ?? "", TOOLRELAY_SIDECAR: command.map((part) => JSON.stringify(part)).join(" ") },
    },
  );
  const lines = createInterface({ input: child.stdout! });
  const ready = new Promise<void>((resolveReady, rejectReady) => {
    lines.on("line", (line) => {
      if (line.includes('"ready"')) resolveReady();
    });
    child.once("exit", (code) => rejectReady(new Error(`${label}: the Python host exited with code ${code}`)));
  });
  await withDeadline(ready, 30_000, `${label} ready`);
  return { label, close: () => stopChild(child, () => child.stdin!.end()) };
}

function stopChild(child: ChildProcess, end: () => void): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolveStop) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolveStop();
    });
    end();
  });
}
