/**
 * An MCP stdio transport that starts the server as a child process with
 * exactly the environment it is given, and never leaves it behind.
 *
 * Why not the SDK's `StdioClientTransport`: it always merges HOME, LOGNAME,
 * PATH, SHELL, TERM and USER of this process into the child's environment, and
 * it signals only the direct child, so a server started through a wrapper
 * (`npx`, `uv run`, a shell script) leaves its real process running. Here:
 *
 * - **Environment**: the `env` named, plus `PATH` (so that the command and a
 *   `#!/usr/bin/env node` script can be found) and, on Windows, the few
 *   variables a process needs to start (`SYSTEMROOT`, `PATHEXT`, `COMSPEC`,
 *   `TEMP`, `TMP`). Nothing else of this process is inherited: no API keys,
 *   no tokens. A variable named in `env` wins over the inherited one.
 * - **Process group**: on POSIX the child leads its own process group, and
 *   `close()` ends the group: stdin closed (the polite MCP shutdown), then
 *   SIGTERM to the group after 2 s, then SIGKILL after 2 s more.
 * - **stderr** is read, never shown: its last 8 KiB are kept for the error
 *   that reports a server that failed to start or exited.
 *
 * Framing is the SDK's (`ReadBuffer`, `serializeMessage`: one JSON-RPC
 * message per line).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { systemTimers, unrefTimer, type Timers } from "../internal/timers.js";

/** How a stdio server process is started. */
export interface McpStdioCommand {
  /** The executable, found on `PATH` (the inherited one, or `env.PATH`). Required. */
  command: string;
  /** Its arguments. Default `[]`. */
  args?: readonly string[] | undefined;
  /** The child's environment besides `PATH` (see the module comment). Default `{}`. */
  env?: Readonly<Record<string, string>> | undefined;
  /** Its working directory. Default: this process's. */
  cwd?: string | undefined;
}

/** How the child ended. */
export interface McpChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Variables inherited from this process (when set), and nothing else. */
export const INHERITED_ENV_VARS: readonly string[] =
  process.platform === "win32" ? ["PATH", "PATHEXT", "SYSTEMROOT", "SYSTEMDRIVE", "COMSPEC", "TEMP", "TMP", "WINDIR"] : ["PATH"];

const STDERR_TAIL_BYTES = 8_192;
const CLOSE_GRACE_MS = 2_000;

/** The child's environment: the inherited basics, then `env` on top. */
export function childEnvironment(env: Readonly<Record<string, string>> = {}): Record<string, string> {
  const result: Record<string, string> = {};
  for (const name of INHERITED_ENV_VARS) {
    const value = process.env[name];
    if (value !== undefined) result[name] = value;
  }
  return { ...result, ...env };
}

export class McpStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #command: McpStdioCommand;
  readonly #timers: Timers;
  readonly #buffer = new ReadBuffer();
  #child: ChildProcess | undefined;
  #exit: McpChildExit | undefined;
  #exited: Promise<void> | undefined;
  #closed = false;
  #stderr = "";
  #closing: Promise<void> | undefined;

  constructor(command: McpStdioCommand, timers: Timers = systemTimers) {
    this.#command = command;
    this.#timers = timers;
  }

  /** The child's process id once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How the child ended, once it did. */
  get exit(): McpChildExit | undefined {
    return this.#exit;
  }

  /** The last 8 KiB the child wrote to stderr. */
  stderrTail(): string {
    return this.#stderr;
  }

  start(): Promise<void> {
    if (this.#child) return Promise.reject(new Error("the MCP stdio transport was already started"));
    const { command, args = [], env, cwd } = this.#command;
    return new Promise((resolve, reject) => {
      const child = spawn(command, [...args], {
        env: childEnvironment(env),
        cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: process.platform !== "win32",
        shell: false,
        windowsHide: true,
      });
      this.#child = child;
      this.#exited = new Promise((done) => child.once("close", () => done()));
      child.once("spawn", () => resolve());
      child.once("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once("exit", (code, signal) => {
        this.#exit = { code, signal };
      });
      child.once("close", () => {
        this.#closed = true;
        this.#buffer.clear();
        this.onclose?.();
      });
      child.stdout!.on("data", (chunk: Buffer) => this.#read(chunk));
      child.stderr!.on("data", (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
      });
      for (const stream of [child.stdin!, child.stdout!, child.stderr!]) stream.on("error", (error) => this.onerror?.(error));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin?.writable || this.#exit) return Promise.reject(new Error("the MCP server process is not running"));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", () => resolve());
    });
  }

  /** End the child and its process group (see the module comment). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const child = this.#child;
    if (!child || child.pid === undefined) return;
    try {
      child.stdin?.end();
    } catch {
      // Already gone.
    }
    if (!(await this.#waitForExit(CLOSE_GRACE_MS))) {
      this.#signalGroup(child.pid, "SIGTERM");
      if (!(await this.#waitForExit(CLOSE_GRACE_MS))) this.#signalGroup(child.pid, "SIGKILL");
    }
    // The leader is gone; a wrapper's children may still run in its group.
    this.#signalGroup(child.pid, "SIGTERM");
    await this.#waitForExit(CLOSE_GRACE_MS);
  }

  /** `true` once the child's streams closed, `false` when `ms` passed first. */
  #waitForExit(ms: number): Promise<boolean> {
    if (this.#closed) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.#timers.setTimeout(() => resolve(false), ms);
      unrefTimer(timer);
      void this.#exited!.then(() => {
        this.#timers.clearTimeout(timer);
        resolve(true);
      });
    });
  }

  #signalGroup(pid: number, signal: NodeJS.Signals): void {
    try {
      if (process.platform === "win32") this.#child?.kill(signal);
      else process.kill(-pid, signal);
    } catch {
      // ESRCH: nothing left in the group.
    }
  }

  #read(chunk: Buffer): void {
    try {
      this.#buffer.append(chunk);
    } catch (error) {
      // Over the SDK's 10 MiB line limit: the buffer was cleared; the call it answered will time out.
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#buffer.readMessage();
      } catch (error) {
        // A line that is not a JSON-RPC message (a server printing to stdout): reported, skipped.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }
}
