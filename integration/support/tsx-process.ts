/**
 * Run one of our TypeScript entry points (the relay CLI, the model) as its own
 * Node process, read its output line by line, and stop it. Children are killed
 * if the test process exits first.
 */
import { spawn, type ChildProcess } from "node:child_process";

export interface TsxProcess {
  readonly pid: number;
  readonly lines: string[];
  /** Resolves with the first output line (stdout or stderr) matching `pattern`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  output(): string;
  /** SIGTERM, SIGKILL after 1 s; resolves when the process is gone. Idempotent. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

export function startTsxProcess(script: string, args: string[] = [], env: Record<string, string> = {}): TsxProcess {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  live.add(child);
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => live.delete(child));
  for (const stream of [child.stdout!, child.stderr!]) {
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (text: string) => {
      partial += text;
      const parts = partial.split(/\r?\n/);
      partial = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        for (const listener of [...listeners]) listener(line);
      }
    });
  }
  return {
    pid: child.pid ?? -1,
    lines,
    output: () => lines.join("\n"),
    waitForLine(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        for (const line of lines) {
          const match = pattern.exec(line);
          if (match) return resolve(match);
        }
        const onLine = (line: string) => {
          const match = pattern.exec(line);
          if (!match) return;
          done();
          resolve(match);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${script}: no line matching ${pattern} within ${timeoutMs} ms\n${lines.slice(-20).join("\n")}`));
        }, timeoutMs);
        const onExit = () => {
          done();
          reject(new Error(`${script} exited before printing ${pattern}\n${lines.slice(-20).join("\n")}`));
        };
        const done = () => {
          clearTimeout(timer);
          listeners.delete(onLine);
          child.off("exit", onExit);
        };
        listeners.add(onLine);
        child.once("exit", onExit);
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 1_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
