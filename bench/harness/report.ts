/** The benchmark table, as text for the terminal and as Markdown for docs/performance.md. */
import type { MachineInfo } from "./machine.js";
import type { ResultRow, SuiteResult } from "./report-types.js";
import { formatRatio } from "./stats.js";

export interface RunInfo {
  machine: MachineInfo;
  date: string;
  command: string;
  sdkOrigin: string;
  totalSeconds: number;
  quick: boolean;
}

function goalCell(row: ResultRow): string {
  if (!row.goal) return "";
  return `${row.goal.text} ${row.goal.met ? "✅" : "❌"}`;
}

function cells(row: ResultRow): string[] {
  return [
    row.section,
    row.measure,
    `${row.baselineName}: ${row.baselineValue}`,
    `${row.candidateName}: ${row.candidateValue}`,
    formatRatio(row.ratio),
    goalCell(row),
  ];
}

/** A plain-text table (stdout). */
export function textTable(rows: readonly ResultRow[]): string {
  const header = ["benchmark", "measure", "baseline", "candidate", "ratio", "goal"];
  const body = rows.map(cells);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((line) => line[column]!.length)));
  const format = (line: string[]) =>
    line
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  return [format(header), widths.map((width) => "-".repeat(width)).join("  "), ...body.map(format)].join("\n");
}

const escapeCell = (text: string) => text.replaceAll("|", "\\|");

export function markdownReport(info: RunInfo, suites: readonly SuiteResult[], analysis: string | undefined): string {
  const rows = suites.flatMap((suite) => suite.rows);
  const lines: string[] = [];
  lines.push("# Performance");
  lines.push("");
  lines.push(
    "<!-- Written by `npm run bench` (bench/run.ts). Do not edit by hand: re-run the bench; the analysis section comes from bench/ANALYSIS.md. -->",
  );
  lines.push("");
  if (info.quick) lines.push("> **Quick run** (a few iterations, harness check only): the figures below mean nothing.\n");
  lines.push(
    "Every figure is a **ratio against a baseline measured in the same run** (absolute values are shown for orientation only; this machine is shared and noisy). Latencies are p50/p99 over many iterations after a warm-up.",
  );
  lines.push("");
  lines.push("| | |");
  lines.push("| --- | --- |");
  lines.push(
    `| Machine | ${escapeCell(info.machine.cpuModel)}, ${info.machine.cores} cores, ${info.machine.memoryGiB} GiB RAM (${escapeCell(info.machine.os)}) |`,
  );
  lines.push(`| Node | ${info.machine.node} |`);
  lines.push(`| Date | ${info.date} |`);
  lines.push(`| Command | \`${info.command}\` |`);
  lines.push(`| SDK under test | ${info.sdkOrigin} |`);
  lines.push(`| Load average at start (1/5/15 min) | ${info.machine.loadAverage} |`);
  lines.push(
    `| Run time | ${info.totalSeconds.toFixed(0)} s (${suites.map((suite) => `${suite.name} ${suite.seconds.toFixed(0)} s`).join(", ")}) |`,
  );
  lines.push("");
  lines.push("## Results");
  lines.push("");
  lines.push("| Benchmark | Measure | Baseline | Candidate | Ratio | Goal | Notes |");
  lines.push("| --- | --- | --- | --- | ---: | --- | --- |");
  for (const row of rows) {
    lines.push(
      `| ${escapeCell(row.section)} | ${escapeCell(row.measure)} | ${escapeCell(row.baselineName)}: ${escapeCell(row.baselineValue)} | ${escapeCell(row.candidateName)}: ${escapeCell(row.candidateValue)} | ${formatRatio(row.ratio)} | ${escapeCell(goalCell(row))} | ${escapeCell(row.note ?? "")} |`,
    );
  }
  lines.push("");
  lines.push(
    "Ratio = candidate ÷ baseline (for throughput, higher is better; for everything else, lower). In section 6 the ratio is the SDK's share of the whole turn; in section 4 the goals are absolute (the baseline is shown for scale).",
  );
  lines.push("");
  lines.push("## How each figure was measured");
  lines.push("");
  for (const suite of suites) for (const note of suite.notes) lines.push(`- ${note}`);
  lines.push(
    "- The SDK under test is bundled from packages/toolrelay/src/ with esbuild exactly as `tsup` builds the package (ESM, target node20, dependencies external) at the start of the run (bench/harness/build-sdk.ts). Running the source through tsx instead would add esbuild's `keepNames` `__name(...)` wrappers to every function and closure the SDK creates per call.",
  );
  lines.push("");
  if (analysis) {
    lines.push(analysis.trim());
    lines.push("");
  }
  lines.push("<details><summary>Raw summaries (JSON)</summary>");
  lines.push("");
  lines.push("```json");
  lines.push(
    JSON.stringify(
      Object.fromEntries(suites.map((suite) => [suite.name, suite.details ?? {}])),
      (_key, value) => (typeof value === "number" ? Math.round(value * 100) / 100 : value),
      1,
    ),
  );
  lines.push("```");
  lines.push("");
  lines.push("</details>");
  lines.push("");
  return lines.join("\n");
}
