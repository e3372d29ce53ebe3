/**
 * toolrelay's executables as real processes, from their sources through tsx: what a user runs
 * (`toolrelay-relay`, `toolrelay-openai`, `toolrelay-sidecar`), its stdout, stderr and exit code.
 * Every process a test starts is killed after it ({@link killCliProcesses} in `afterEach`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { until } from "./wait.js";

/** The three executables' entry files. */
export const CLI_BINS = {
  "toolrelay-relay": fileURLToPath(new URL("../../packages/relay/src/bin.ts", import.meta.url)),
  "toolrelay-openai": fileURLToPath(new URL("../../packages/toolrelay/src/openai/bin.ts", import.meta.url)),
  "toolrelay-sidecar": fileURLToPath(new URL("../../packages/toolrelay/src/sidecar/bin.ts", import.meta.url)),
} as const;

export type CliName = keyof typeof CLI_BINS;

export interface CliProcess {
  child: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** The exit code (a signal's end: `null`). */
  exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in stdout. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

const running = new Set<ChildProcess>();

/** Starts `name` with `args` (stdin closed unless `stdin: "pipe"`); `env` is added to this process's. */
export function startCli(name: CliName, args: readonly string[], options: { env?: NodeJS.ProcessEnv; stdin?: "pipe" } = {}): CliProcess {
  const child = spawn(process.execPath, ["--import", "tsx", CLI_BINS[name], ...args], {
    stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
    env: { ...process.env, ...options.env },
  });
  running.add(child);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const stdout = () => Buffer.concat(out).toString("utf8");
  const stderr = () => Buffer.concat(err).toString("utf8");
  return {
    child,
    stdout,
    stderr,
    exited,
    waitForStdout: (pattern, timeoutMs = 60_000) =>
      until(
        () => pattern.exec(stdout()),
        () => `${pattern} on ${name}'s stdout; stdout: ${stdout()} stderr: ${stderr()}`,
        timeoutMs,
        20,
      ),
  };
}

/** Runs `name` to its end: its exit code and output. */
export async function runCli(name: CliName, args: readonly string[], options: { env?: NodeJS.ProcessEnv } = {}) {
  const run = startCli(name, args, options);
  const exitCode = await run.exited;
  return { exitCode, stdout: run.stdout(), stderr: run.stderr() };
}

/** Kills every process a test started and is still running. */
export function killCliProcesses(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}
