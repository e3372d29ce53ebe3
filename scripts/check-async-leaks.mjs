#!/usr/bin/env node
// Runs the reliability and session suites under vitest's async-leak detection
// (`vitest run --detectAsyncLeaks`, vitest 4.1) and FAILS when vitest reports any leak.
// vitest itself exits 0 when it found leaks (it only prints them), so this script reads its
// output: the "Async Leaks <n>" banner, the "Leaks <n> leak(s)" summary line and every
// "<TYPE> leaking in <file>" line. It also fails when vitest fails, or when no test summary
// was printed at all (a crash must not pass as "no leaks").
//
// Usage: node scripts/check-async-leaks.mjs [extra vitest args]
//   default targets: test/reliability test/session (projects "reliability" and "unit")
//   CHECK_ASYNC_LEAKS_TARGETS="test/a test/b" to check other folders.
// Plain Node ESM, no dependencies.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const targets = (process.env.CHECK_ASYNC_LEAKS_TARGETS ?? "test/reliability test/session").split(/\s+/).filter(Boolean);
const args = [vitest, "run", "--project", "unit", "--project", "reliability", "--detectAsyncLeaks", ...targets, ...process.argv.slice(2)];

// Leak detection records a stack trace for every async resource, which slows the test process
// several times: the reliability suites scale their deadlines (RELIABILITY_TIME_SCALE) and run
// fewer iterations here; their full-size figures come from the normal test run. Each variable
// can be overridden from the environment.
const environment = {
  RELIABILITY_TIME_SCALE: "5",
  CHAOS_SCHEDULES: "10",
  SIGNAL_TURNS: "200",
  HEAP_CALLS: "2000",
  HEAP_RECONNECTS: "200",
  TOOLRELAY_MODEL_RUNS: "500",
  ...process.env,
  NO_COLOR: "1",
  FORCE_COLOR: "0",
};

const started = Date.now();
const child = spawn(process.execPath, args, {
  cwd: root,
  env: environment,
  stdio: ["ignore", "pipe", "pipe"],
});
let output = "";
child.stdout.on("data", (chunk) => {
  output += chunk;
  process.stdout.write(chunk);
});
child.stderr.on("data", (chunk) => {
  output += chunk;
  process.stderr.write(chunk);
});

const code = await new Promise((resolve) => child.on("close", (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
// eslint-disable-next-line no-control-regex
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI colour codes removed here
const text = output.replace(/\u001b\[[0-9;]*[A-Za-z]/g, "");
const banner = /Async Leaks (\d+)/.exec(text);
const summary = /^\s*Leaks\s+(\d+) leaks?\b/m.exec(text);
const lines = [...text.matchAll(/^(\S+) leaking in (\S+)/gm)].map((match) => `${match[1]} in ${match[2]}`);
const leaks = Math.max(Number(banner?.[1] ?? 0), Number(summary?.[1] ?? 0), lines.length);
const seconds = ((Date.now() - started) / 1000).toFixed(1);

if (leaks > 0) {
  console.error(`\ncheck-async-leaks: FAILED — vitest reported ${leaks} async leak(s) in ${targets.join(" ")} (${seconds} s):`);
  for (const line of [...new Set(lines)]) console.error(`  ${line}`);
  process.exit(1);
}
if (code !== 0) {
  console.error(`\ncheck-async-leaks: FAILED — vitest exited with code ${code} (${seconds} s)`);
  process.exit(code);
}
if (!/^\s*Tests\s+\d+ passed/m.test(text)) {
  console.error(`\ncheck-async-leaks: FAILED — no test summary in vitest's output (${seconds} s)`);
  process.exit(1);
}
console.log(`\ncheck-async-leaks: OK — 0 async leaks in ${targets.join(" ")} (${seconds} s)`);
