/**
 * The example ACP agent (examples/acp-agent/main.ts) as a separate process on
 * stdio, the way an editor starts it. Only the environment given here (plus
 * PATH and HOME) reaches it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { ndJsonStream, type Stream } from "@agentclientprotocol/sdk";

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface AgentProcess {
  readonly child: ChildProcess;
  /** The ACP stream to the agent (the editor's side). */
  readonly stream: Stream;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /** End stdin (the agent closes its sessions and exits), then SIGTERM / SIGKILL if it does not. Idempotent. */
  stop(options?: { graceMs?: number }): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnExampleAgent(env: Record<string, string>): AgentProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/acp-agent/main.ts"], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
  );
  let stopping: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  return {
    child,
    stream,
    exited,
    stderr: () => stderr,
    stop(options = {}) {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin!.end();
          const graceful = await Promise.race([exited, delay(options.graceMs ?? 5_000)]);
          if (graceful === undefined) {
            child.kill("SIGTERM");
            const terminated = await Promise.race([exited, delay(2_000)]);
            if (terminated === undefined) child.kill("SIGKILL");
          }
        }
        return exited;
      })();
      return stopping;
    },
  };
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}
