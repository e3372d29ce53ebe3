import { spawn, type ChildProcess } from "node:child_process";
import { ToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";

/** How `backend: { kind: "local", spawn }` starts `letta server --listen` (every field optional). */
export interface SpawnLettaServerOptions {
  /** Executable to run. Default `"letta"` (the Letta Code CLI on PATH). */
  command?: string | undefined;
  /** Arguments placed before `server --listen` (e.g. the path of `letta.js` when `command` is `node`). Default `[]`. */
  commandArgs?: string[] | undefined;
  /** Address to listen on. Default: a free loopback port (`ws://127.0.0.1:0`). */
  listen?: string | undefined;
  /** Extra environment for the server (merged over `process.env`). */
  env?: Record<string, string | undefined> | undefined;
  /** Working directory of the server process. Default: the current one. */
  cwd?: string | undefined;
  /** How long to wait for the `Listening on` line, in ms. Default 30_000. */
  startupTimeoutMs?: number | undefined;
}

export interface SpawnedLettaServer {
  /** The WebSocket address the server printed. */
  url: string;
  process: ChildProcess;
  /** SIGTERM, then SIGKILL after 1 s; resolves when the process has exited. */
  stop(): Promise<void>;
}

const LISTENING_LINE = /^Listening on\s+(ws:\/\/\S+)\s*$/m;

/**
 * Start `letta server --listen` and read the address it prints. Only the
 * `Listening on` line is parsed. The child is killed when this process exits.
 */
export function spawnLettaServer(options: SpawnLettaServerOptions = {}, timers: Timers = systemTimers): Promise<SpawnedLettaServer> {
  const command = options.command ?? "letta";
  const args = [...(options.commandArgs ?? []), "server", "--listen", ...(options.listen ? [options.listen] : [])];
  const startupTimeoutMs = options.startupTimeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(command, args, {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      reject(new ToolrelayError("SPAWN_FAILED", `cannot start ${command}: ${(error as Error).message}`, { cause: error }));
      return;
    }
    let output = "";
    let settled = false;
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    const killOnExit = () => child.kill("SIGKILL");
    process.once("exit", killOnExit);
    const stop = async () => {
      process.off("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = timers.setTimeout(() => child.kill("SIGKILL"), 1_000);
      await exited;
      timers.clearTimeout(timer);
    };
    const fail = (message: string, cause?: unknown, details?: Record<string, unknown>) => {
      if (settled) return;
      settled = true;
      timers.clearTimeout(deadline);
      void stop();
      const tail = output.split("\n").slice(-20).join("\n");
      const shown = tail.trim() === "" ? message : `${message}\n--- server output ---\n${tail}`;
      reject(new ToolrelayError("SPAWN_FAILED", shown, { cause, ...(details ? { details } : {}) }));
    };
    const deadline = timers.setTimeout(
      () => fail(`${command} printed no "Listening on" line within ${startupTimeoutMs} ms`),
      startupTimeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.length > 64_000) output = output.slice(-32_000);
      const match = LISTENING_LINE.exec(output);
      if (match && !settled) {
        settled = true;
        timers.clearTimeout(deadline);
        child.stdout?.off("data", onData);
        child.stdout?.resume();
        child.stderr?.resume();
        resolve({ url: match[1]!, process: child, stop });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      if (!settled) output += chunk.toString();
    });
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") fail(notFound(command), error, { command, errno: error.code });
      else fail(`cannot start ${command}: ${error.message}`, error, error.code ? { command, errno: error.code } : { command });
    });
    child.once("exit", (code, signal) => fail(`${command} exited before listening (code ${code}, signal ${signal})`));
  });
}

/** The message for a command that is not there: what to install, where the docs say how, and the option that names another command. */
function notFound(command: string): string {
  const what = command === "letta" ? "the Letta Code CLI (`letta`)" : `\`${command}\``;
  return (
    `cannot start ${what}: it was not found (spawn ${command} ENOENT; looked up on PATH). ` +
    "Install Letta Code as docs/getting-started.md shows, or name the command to run with `spawn: { command, commandArgs }`"
  );
}
