/**
 * Soak conversations shaped like real ones against the real runtime (test/soak): seeded random
 * conversations of 1–6 turns, the model taking 0–3 s per reply, pauses of 0–1.5 s between turns,
 * 0–3 tool calls per reply, reused `call_0` ids, tools that succeed, throw, return errors, time out
 * or ignore their signal, aborts mid-call and close() mid-burst — over the local app-server and the
 * cloud path (reference relay + real listener). Not part of `npm test` (a fixed seed set of it is:
 * integration/conversation-soak.test.ts).
 *
 *   npm run soak:conversations -- --minutes 30                 # both backends, half the time each
 *   npm run soak:conversations -- --backend local --minutes 5 --seed 42
 *   npm run soak:conversations -- --backend cloud --replay 123456789 --concurrency 1
 *
 * Exits 0 only with no invariant violation; each violation names its seed and a replay command.
 */
import { replayCommand, runSoak, type SoakReport } from "../test/soak/soak-driver.js";
import type { SoakBackendKind } from "../test/soak/soak-backends.js";

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

function number(name: string, fallback: number, min: number, max: number): number {
  const text = option(name);
  const value = text === undefined ? fallback : Number(text);
  if (!Number.isFinite(value) || value < min || value > max)
    throw new Error(`--${name} must be a number from ${min} to ${max}, got ${String(text)}`);
  return value;
}

const backendOption = option("backend") ?? "both";
if (!["local", "cloud", "both"].includes(backendOption)) throw new Error(`--backend must be local, cloud or both, got ${backendOption}`);
const backends: SoakBackendKind[] = backendOption === "both" ? ["local", "cloud"] : [backendOption as SoakBackendKind];
const minutes = number("minutes", 5, 0.1, 24 * 60);
const concurrency = number("concurrency", 4, 1, 16);
const masterSeed = number("seed", Date.now() % 0x7fffffff, 0, 0x7fffffff);
const replay = option("replay")
  ?.split(",")
  .map((text) => Number(text));
if (replay?.some((seed) => !Number.isSafeInteger(seed))) throw new Error("--replay takes conversation seeds, comma-separated");

const reports: SoakReport[] = [];
for (const kind of backends) {
  console.log(
    `soak ${kind}: master seed ${masterSeed}, ${replay ? `replaying ${replay.join(",")}` : `${minutes / backends.length} min`}, ${concurrency} at once`,
  );
  const report = await runSoak({
    kind,
    masterSeed,
    concurrency,
    ...(replay ? { replay } : { minutes: minutes / backends.length }),
    onConversation: (seed, index) => {
      if (index % 10 === 0) console.log(`  ${kind} conversation ${index} (seed ${seed})`);
    },
  });
  reports.push(report);
  console.log(
    `soak ${kind}: ${report.conversations} conversations, ${report.turns} turns, ${report.toolRuns} tool runs, ${report.reusedIds} reused ids, ${report.aborted} aborted turns, ${report.closedMidBurst} closed mid-burst, ${report.violations.length} violations, ${(report.durationMs / 1000).toFixed(0)} s`,
  );
  for (const violation of report.violations) {
    const seed = /seed (\d+)/.exec(violation)?.[1];
    console.log(`  VIOLATION ${violation}${seed ? `\n    replay: ${replayCommand(kind, Number(seed))}` : ""}`);
  }
}
const total = reports.reduce((sum, report) => sum + report.violations.length, 0);
console.log(
  `soak total: ${reports.reduce((sum, report) => sum + report.conversations, 0)} conversations, ${total} violations (load average ${(
    await import("node:os")
  )
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(" ")})`,
);
process.exit(total === 0 ? 0 : 1);
