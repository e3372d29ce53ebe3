/**
 * `npm run bench`: runs every benchmark, prints the table and writes it to
 * docs/performance.md with the machine, Node version, date and command.
 *
 *   npm run bench                       # everything (~4–5 minutes)
 *   npm run bench -- --only round-trip,scale
 *   npm run bench -- --quick --no-write # harness check, a few iterations
 *   npm run bench -- --source           # the SDK from packages/toolrelay/src/ through tsx (not the bundle)
 *   npm run bench -- --out perf.md
 *
 * Suites: round-trip (benchmarks 1–3), scale (4), relay-hop (5), real-turn (6), relay-flood (7), schema-validation (8), sidecar (9),
 * relay-cluster (10: needs `nats-server` on the PATH or NATS_SERVER_BINARY), call-journal (11: its NATS KV row needs it too).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { buildSdkBundles } from "./harness/build-sdk.js";
import { REPO_ROOT } from "./harness/child-process.js";
import { machineInfo, type MachineInfo } from "./harness/machine.js";
import type { Log, SuiteResult } from "./harness/report-types.js";
import { markdownReport, textTable } from "./harness/report.js";

export const SUITE_NAMES = [
  "round-trip",
  "scale",
  "relay-hop",
  "real-turn",
  "relay-flood",
  "schema-validation",
  "sidecar",
  "relay-cluster",
  "call-journal",
] as const;
export type SuiteName = (typeof SUITE_NAMES)[number];

export interface BenchOptions {
  /** Tiny iteration counts: checks the harness, the figures mean nothing. */
  quick?: boolean;
  /** Suites to run. Default: all. */
  only?: readonly SuiteName[];
  /** Where to write the Markdown report; `false` writes nothing. Default docs/performance.md. */
  out?: string | false;
  /** Measure the source through tsx instead of the esbuild bundle. */
  source?: boolean;
  /** The command line to record in the report. */
  command?: string;
  log?: Log;
}

export interface BenchRun {
  suites: SuiteResult[];
  table: string;
  markdown: string;
}

export async function runBench(options: BenchOptions = {}): Promise<BenchRun> {
  const log: Log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  const machine = machineInfo();
  const started = performance.now();
  const date = new Date().toISOString();
  let sdkOrigin = "packages/toolrelay/src/ through tsx (keepNames on: slower than the shipped build)";
  let relayBuildError: string | undefined;
  let removeBundles: (() => void) | undefined;
  if (!options.source) {
    const built = await buildSdkBundles();
    relayBuildError = built.relayError;
    removeBundles = built.remove;
    sdkOrigin = "esbuild bundle of packages/toolrelay/src/ (bench/.build/<pid>/sdk.mjs), built as tsup builds the package";
  }
  try {
    return await runSuites(options, log, { machine, started, date, sdkOrigin, relayBuildError });
  } finally {
    removeBundles?.();
  }
}

async function runSuites(
  options: BenchOptions,
  log: Log,
  context: { machine: MachineInfo; started: number; date: string; sdkOrigin: string; relayBuildError: string | undefined },
): Promise<BenchRun> {
  const { machine, started, date, sdkOrigin, relayBuildError } = context;
  // Imported after the bundle is built: bench/harness/sdk.ts reads TOOLRELAY_BENCH_SDK when it loads.
  const suites: SuiteResult[] = [];
  const selected = options.only ?? SUITE_NAMES;
  for (const name of SUITE_NAMES) {
    if (!selected.includes(name)) continue;
    log(`— ${name}`);
    const suiteStarted = performance.now();
    try {
      suites.push(await runSuite(name, Boolean(options.quick), log, relayBuildError));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`${name} failed: ${error instanceof Error ? (error.stack ?? message) : message}`);
      suites.push({
        name,
        rows: [
          {
            section: name,
            measure: "failed",
            baselineName: "—",
            baselineValue: "—",
            candidateName: "—",
            candidateValue: "—",
            ratio: Number.NaN,
            note: message.split("\n")[0]!.slice(0, 200),
          },
        ],
        notes: [`${name} failed: ${message.split("\n")[0]}`],
        seconds: (performance.now() - suiteStarted) / 1000,
      });
    }
  }
  // Stable order by benchmark number ("1. Round trip" before "2. Throughput", ...).
  const order = (section: string) => Number.parseInt(section, 10) || 99;
  for (const suite of suites) suite.rows.sort((a, b) => order(a.section) - order(b.section));
  suites.sort((a, b) => order(a.rows[0]?.section ?? "") - order(b.rows[0]?.section ?? ""));
  const table = textTable(suites.flatMap((suite) => suite.rows));
  const analysisPath = resolve(REPO_ROOT, "bench/ANALYSIS.md");
  const analysis = !options.quick && existsSync(analysisPath) ? readFileSync(analysisPath, "utf8") : undefined;
  const markdown = markdownReport(
    {
      machine,
      date,
      command: options.command ?? "npm run bench",
      sdkOrigin,
      totalSeconds: (performance.now() - started) / 1000,
      quick: Boolean(options.quick),
    },
    suites,
    analysis,
  );
  if (options.out !== false) writeFileSync(options.out ?? resolve(REPO_ROOT, "docs/performance.md"), markdown);
  return { suites, table, markdown };
}

async function runSuite(name: SuiteName, quick: boolean, log: Log, relayBuildError: string | undefined): Promise<SuiteResult> {
  switch (name) {
    case "round-trip": {
      const suite = await import("./suites/round-trip.js");
      return suite.runRoundTrip(quick ? suite.quickRoundTripConfig : suite.fullRoundTripConfig, log);
    }
    case "scale": {
      const suite = await import("./suites/scale.js");
      return suite.runScale(quick ? suite.quickScaleConfig : suite.fullScaleConfig, log);
    }
    case "relay-hop": {
      const suite = await import("./suites/relay-hop.js");
      if (relayBuildError !== undefined) return suite.pendingRelayResult(`packages/relay/src does not build: ${relayBuildError}`, 0);
      return suite.runRelayHop(quick ? suite.quickRelayHopConfig : suite.fullRelayHopConfig, log);
    }
    case "real-turn": {
      const suite = await import("./suites/real-turn.js");
      return suite.runRealTurn(quick ? suite.quickRealTurnConfig : suite.fullRealTurnConfig, log);
    }
    case "schema-validation": {
      const suite = await import("./suites/schema-validation.js");
      return suite.runSchemaValidation(quick ? suite.quickSchemaValidationConfig : suite.fullSchemaValidationConfig, log);
    }
    case "relay-flood": {
      const suite = await import("./suites/relay-flood.js");
      return suite.runRelayFlood(quick ? suite.quickRelayFloodConfig : suite.fullRelayFloodConfig, log);
    }
    case "sidecar": {
      const suite = await import("./suites/sidecar.js");
      return suite.runSidecarBench(quick ? suite.quickSidecarConfig : suite.fullSidecarConfig, log);
    }
    case "relay-cluster": {
      const suite = await import("./suites/relay-cluster.js");
      if (relayBuildError !== undefined) return suite.pendingClusterResult(`packages/relay/src does not build: ${relayBuildError}`, 0);
      return suite.runRelayCluster(quick ? suite.quickRelayClusterConfig : suite.fullRelayClusterConfig, log);
    }
    case "call-journal": {
      const suite = await import("./suites/call-journal.js");
      return suite.runCallJournal(quick ? suite.quickCallJournalConfig : suite.fullCallJournalConfig, log);
    }
  }
}

function parseArguments(argv: readonly string[]): BenchOptions {
  const options: BenchOptions = {};
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    const [flag, inline] = argument.split("=", 2) as [string, string | undefined];
    const value = () => inline ?? argv[++index];
    if (flag === "--quick") options.quick = true;
    else if (flag === "--source") options.source = true;
    else if (flag === "--no-write") options.out = false;
    else if (flag === "--out") options.out = resolve(value() ?? "");
    else if (flag === "--only") {
      const names = (value() ?? "").split(",").filter(Boolean);
      for (const name of names)
        if (!(SUITE_NAMES as readonly string[]).includes(name)) throw new Error(`unknown suite ${name}; suites: ${SUITE_NAMES.join(", ")}`);
      options.only = names as SuiteName[];
    } else throw new Error(`unknown argument ${argument}; see bench/run.ts`);
  }
  return options;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("bench/run.ts")) {
  const argv = process.argv.slice(2);
  const options = parseArguments(argv);
  options.command = ["npm run bench", ...(argv.length > 0 ? ["--", ...argv] : [])].join(" ");
  const run = await runBench(options);
  process.stdout.write(`\n${run.table}\n`);
  if (options.out !== false) process.stderr.write(`\nwritten: ${options.out ?? "docs/performance.md"}\n`);
  // Every suite stops what it started; this only guards against a helper library's stray handle.
  process.exit(run.suites.some((suite) => suite.rows.some((row) => row.measure === "failed")) ? 1 : 0);
}
