/**
 * Soak the forced-drop cloud scenario (integration/cloud-live-relay.test.ts, "2 forced SDK socket
 * drops and 1 listener reconnect"): the reference relay, the REAL Letta Code listener and the
 * scripted model, each its own process, 20 tool calls per run with the faults injected while
 * calls run — N runs in a row (default 20) with a CPU hog process beside them. Not part of
 * `npm test`.
 *
 *   npm run soak:cloud                 # 20 runs
 *   npm run soak:cloud -- --runs 5
 *
 * Prints one line per run and, at the end, the runs that passed, the total ledger rows and the
 * duplicate rows (a tool that ran twice). Exits 0 only when every run passed with no duplicate.
 * Bounded: each run gives up after 60 s of no progress (the scenario's own deadline), the whole
 * soak after `runs × 120 s`, and the hog dies with this process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { startCloudStack, type CloudStack } from "../integration/support/cloud-stack.js";
import { SETTLED_OUTCOMES, forcedDropRun, removeLedgers } from "../integration/support/forced-drop-scenario.js";

const RUN_BUDGET_MS = 120_000;

function runsWanted(): number {
  const index = process.argv.indexOf("--runs");
  const text = index === -1 ? process.env.SOAK_RUNS : process.argv[index + 1];
  const runs = text === undefined ? 20 : Number(text);
  if (!Number.isInteger(runs) || runs < 1 || runs > 500) throw new Error(`--runs must be an integer from 1 to 500, got ${String(text)}`);
  return runs;
}

/** A busy loop in its own process; it exits when its deadline passes or its parent is gone. */
function startCpuHog(deadlineMs: number): ChildProcess {
  const source = `
    const parent = process.ppid, end = Date.now() + ${deadlineMs};
    const spin = () => {
      const slice = Date.now() + 50;
      while (Date.now() < slice) {}
      if (Date.now() > end || process.ppid !== parent) process.exit(0);
      setImmediate(spin);
    };
    spin();`;
  return spawn(process.execPath, ["-e", source], { stdio: "ignore" });
}

interface RunReport {
  passed: boolean;
  rows: number;
  duplicates: number;
  durationMs: number;
  why: string;
}

async function oneRun(stack: CloudStack, index: number): Promise<RunReport> {
  const started = Date.now();
  try {
    const run = await forcedDropRun(stack, `soak-${index}`);
    const duplicates = run.rows.length - new Set(run.rows).size;
    const problems: string[] = [];
    if (run.faults !== 3) problems.push(`${run.faults} faults injected`);
    const stops = run.results.map((result) => result.stopReason);
    if (stops.length !== 20 || stops.some((stop) => stop !== "end_turn")) problems.push(`stop reasons ${JSON.stringify(stops)}`);
    if (run.ends.some((event) => !SETTLED_OUTCOMES.includes(event.outcome))) problems.push("an unsettled call");
    if (run.rows.length !== 20) problems.push(`${run.rows.length} ledger rows`);
    if (duplicates > 0) problems.push(`${duplicates} duplicate row(s)`);
    return { passed: problems.length === 0, rows: run.rows.length, duplicates, durationMs: Date.now() - started, why: problems.join("; ") };
  } catch (error) {
    return {
      passed: false,
      rows: 0,
      duplicates: 0,
      durationMs: Date.now() - started,
      why: String((error as Error)?.message ?? error).split("\n")[0]!,
    };
  }
}

async function main(): Promise<number> {
  const runs = runsWanted();
  const deadline = Date.now() + runs * RUN_BUDGET_MS;
  const hog = startCpuHog(runs * RUN_BUDGET_MS + 60_000);
  const stack = await startCloudStack({ listenerMode: "paired", envName: "toolrelay-soak" });
  const reports: RunReport[] = [];
  try {
    for (let index = 1; index <= runs; index++) {
      if (Date.now() > deadline) {
        console.log(`stopped after ${index - 1} runs: the soak's time budget is spent`);
        break;
      }
      const report = await oneRun(stack, index);
      reports.push(report);
      console.log(
        `run ${index}/${runs}: ${report.passed ? "passed" : "FAILED"} — ${report.rows} rows, ${report.duplicates} duplicate(s), ${report.durationMs} ms${report.why ? ` (${report.why})` : ""}`,
      );
    }
  } finally {
    hog.kill("SIGKILL");
    await stack.stop();
    removeLedgers();
  }
  const passed = reports.filter((report) => report.passed).length;
  const rows = reports.reduce((sum, report) => sum + report.rows, 0);
  const duplicates = reports.reduce((sum, report) => sum + report.duplicates, 0);
  console.log(`soak:cloud — runs passed: ${passed}/${runs}; ledger rows: ${rows}; duplicate rows: ${duplicates}`);
  return passed === runs && duplicates === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
