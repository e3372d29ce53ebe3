/**
 * One sandbox's listener process and its directory: `home/` (its HOME), `workspace/` (its cwd,
 * where the runtime's built-in tools work), `tmp/` (its TMPDIR) and `root/` (where the namespace
 * mounts its filesystem). Started with exactly the environment it is given, in its own process
 * group; stopped with SIGTERM to the group, SIGKILL after a second; then the directory is removed.
 * Output is kept (the last lines only) for the test hook and never logged.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { TimerHandle, Timers } from "toolrelay/protocol";
import type { RelayLogger } from "./relay-options.js";
import { sandboxCommand, type SandboxLayout } from "./sandbox-isolation.js";
import type { ResolvedSandboxOptions } from "./sandbox-options.js";

export interface SandboxExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const STOP_GRACE_MS = 1_000;

/** Every live sandbox process of this relay process: killed if the relay exits without stopping them. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

export class SandboxProcess {
  readonly layout: SandboxLayout;
  readonly directory: string;
  readonly pid: number;
  readonly exited: Promise<SandboxExit>;
  #output: string[] = [];
  #maxLines: number;
  #exit: SandboxExit | undefined;
  #stopping: Promise<void> | undefined;
  #timers: Timers;

  /**
   * Makes the directory and starts the listener: `command args… --env-name <connectionName>`,
   * with `env` (and nothing else) as its environment.
   */
  constructor(options: {
    directory: string;
    sharedState: string | undefined;
    connectionName: string;
    env: Record<string, string>;
    sandbox: ResolvedSandboxOptions;
    logger: RelayLogger;
    timers: Timers;
  }) {
    const { directory, sandbox } = options;
    this.#timers = options.timers;
    this.directory = directory;
    this.layout = {
      root: join(directory, "root"),
      home: join(directory, "home"),
      workspace: join(directory, "workspace"),
      tmp: join(directory, "tmp"),
      sharedState: options.sharedState,
    };
    for (const path of [this.layout.root, this.layout.home, this.layout.workspace, this.layout.tmp])
      mkdirSync(path, { recursive: true, mode: 0o700 });
    this.#maxLines = sandbox.outputLines;
    const env = { ...options.env, HOME: this.layout.home, TMPDIR: this.layout.tmp };
    const command = sandboxCommand(
      sandbox.isolation,
      this.layout,
      sandbox.readOnlyPaths,
      [sandbox.command, ...sandbox.args, "--env-name", options.connectionName],
      env,
    );
    const child = spawn(command.file, command.args, {
      cwd: this.layout.workspace,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.pid = child.pid ?? -1;
    this.exited = new Promise<SandboxExit>((resolve) => {
      const finish = (exit: SandboxExit) => {
        if (this.#exit) return;
        this.#exit = exit;
        live.delete(child);
        resolve(exit);
      };
      child.once("exit", (code, signal) => finish({ code, signal }));
      child.once("error", (error) => {
        options.logger.warn("relay: sandbox process could not start", { error: error.message });
        finish({ code: null, signal: null });
      });
    });
    live.add(child);
    installExitHook();
    for (const stream of [child.stdout, child.stderr]) this.#collect(stream);
  }

  get hasExited(): boolean {
    return this.#exit !== undefined;
  }

  /** The last output lines (both streams); the listener's `--debug` output prints the frames it handles. */
  output(): string[] {
    return [...this.#output];
  }

  /** SIGTERM to the process group, SIGKILL after a second, then the directory is removed. Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      if (!this.#exit && this.pid > 0) {
        killGroup(this.pid, "SIGTERM");
        let timer: TimerHandle | undefined;
        const gone = await Promise.race([
          this.exited.then(() => true),
          new Promise<boolean>((resolve) => (timer = this.#timers.setTimeout(() => resolve(false), STOP_GRACE_MS))),
        ]);
        if (timer !== undefined) this.#timers.clearTimeout(timer);
        if (!gone) killGroup(this.pid, "SIGKILL");
        await this.exited;
      }
      if (this.pid > 0) killGroup(this.pid, "SIGKILL");
      this.#removeDirectory();
    })();
    return this.#stopping;
  }

  /**
   * The root is removed with `rmdir` (it must be empty from here: the namespace's mounts are
   * private to it), the rest recursively.
   */
  #removeDirectory(): void {
    try {
      rmdirSync(this.layout.root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") return;
    }
    rmSync(this.directory, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
  }

  #collect(stream: NodeJS.ReadableStream | null): void {
    if (!stream) return;
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (text: string) => {
      partial += text;
      const lines = partial.split(/\r?\n/);
      partial = lines.pop() ?? "";
      if (partial.length > 4_096) partial = partial.slice(-4_096);
      for (const line of lines) this.#keep(line.length > 4_096 ? `${line.slice(0, 4_096)}…` : line);
    });
  }

  #keep(line: string): void {
    if (this.#maxLines === 0) return;
    this.#output.push(line);
    if (this.#output.length > this.#maxLines) this.#output.splice(0, this.#output.length - this.#maxLines);
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of live) if (child.pid) killGroup(child.pid, "SIGKILL");
  });
}
