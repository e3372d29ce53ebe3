/**
 * A bench helper process (runtime side, scale worker, hop process): a TypeScript
 * script forked with the tsx loader, driven by request/answer messages over IPC.
 * Every request has a deadline; `stop()` kills the child and waits for its exit.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";

/** The repository root (bench/harness/../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** A message a bench child sends back: the answer to request `id`, or an unsolicited event. */
export interface ChildAnswer {
  id?: number;
  ok?: boolean;
  error?: string;
  [field: string]: unknown;
}

export interface BenchChildOptions {
  /** Extra node flags (e.g. `--expose-gc`). */
  nodeFlags?: string[];
  /** Arguments for the script. */
  args?: string[];
  /** Deadline of the child's `ready` message, in ms. Default 20_000. */
  readyTimeoutMs?: number;
}

export class BenchChild {
  readonly process: ChildProcess;
  readonly ready: Promise<ChildAnswer>;
  #nextId = 1;
  #pending = new Map<number, { resolve(answer: ChildAnswer): void; reject(error: Error): void; timer: NodeJS.Timeout }>();
  #exited: Promise<void>;
  #stderr: string[] = [];

  constructor(script: string, options: BenchChildOptions = {}) {
    const path = resolve(REPO_ROOT, script);
    this.process = fork(path, options.args ?? [], {
      cwd: REPO_ROOT,
      execArgv: [...(options.nodeFlags ?? []), "--import", "tsx"],
      stdio: ["ignore", "inherit", "pipe", "ipc"],
      serialization: "advanced",
    });
    this.process.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr.push(chunk.toString());
      if (this.#stderr.length > 50) this.#stderr.shift();
    });
    this.#exited = new Promise((resolveExit) => this.process.once("exit", () => resolveExit()));
    let onReady!: (answer: ChildAnswer) => void;
    let onFail!: (error: Error) => void;
    this.ready = new Promise<ChildAnswer>((resolveReady, rejectReady) => {
      onReady = resolveReady;
      onFail = rejectReady;
    });
    const readyTimer = setTimeout(
      () => onFail(new Error(`${script}: no ready message within ${options.readyTimeoutMs ?? 20_000} ms`)),
      options.readyTimeoutMs ?? 20_000,
    );
    this.process.on("message", (message: ChildAnswer) => {
      if (message.type === "ready") {
        clearTimeout(readyTimer);
        onReady(message);
        return;
      }
      if (typeof message.id !== "number") return;
      const pending = this.#pending.get(message.id);
      if (!pending) return;
      this.#pending.delete(message.id);
      clearTimeout(pending.timer);
      if (message.ok === false) pending.reject(new Error(`${script}: ${message.error ?? "request failed"}`));
      else pending.resolve(message);
    });
    this.process.once("exit", (code, signal) => {
      clearTimeout(readyTimer);
      const error = new Error(`${script} exited (code ${code}, signal ${signal}): ${this.#stderr.join("").slice(-2000)}`);
      onFail(error);
      for (const pending of this.#pending.values()) {
        clearTimeout(pending.timer);
        pending.reject(error);
      }
      this.#pending.clear();
    });
  }

  /** Send `{ cmd, ...fields }` and resolve with the child's answer (deadline `timeoutMs`, default 120 s). */
  request(cmd: string, fields: Record<string, unknown> = {}, timeoutMs = 120_000): Promise<ChildAnswer> {
    const id = this.#nextId++;
    return new Promise<ChildAnswer>((resolveAnswer, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`bench child: no answer to ${cmd} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve: resolveAnswer, reject, timer });
      this.process.send({ id, cmd, ...fields });
    });
  }

  /** Kill the child (SIGTERM, SIGKILL after 2 s) and wait for its exit. Idempotent. */
  async stop(): Promise<void> {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      this.process.kill("SIGTERM");
      const timer = setTimeout(() => this.process.kill("SIGKILL"), 2_000);
      await this.#exited;
      clearTimeout(timer);
    }
  }
}

/**
 * The child's side: answer each request with `handler`'s result (or its error),
 * and announce readiness with `ready`'s fields.
 */
export function serveParent(handler: (cmd: string, message: Record<string, unknown>) => Promise<Record<string, unknown>>): {
  ready(fields?: Record<string, unknown>): void;
} {
  if (!process.send) throw new Error("this script must be started by the bench (no IPC channel)");
  process.on("message", (message: Record<string, unknown>) => {
    const id = message.id as number;
    handler(String(message.cmd), message).then(
      (answer) => process.send!({ id, ok: true, ...answer }),
      (error: unknown) => process.send!({ id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  });
  process.on("disconnect", () => process.exit(0));
  return { ready: (fields = {}) => process.send!({ type: "ready", ...fields }) };
}
