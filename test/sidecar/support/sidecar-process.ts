/**
 * The `toolrelay-sidecar` executable as users run it (the built
 * packages/toolrelay/dist/sidecar/bin.js, which `npm test` builds first) as a
 * child process on its real stdio, with a {@link FrameHost} on its pipes. Its
 * environment is `PATH` alone, as the Python library starts it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { FrameHost } from "./frame-host.js";

/** The built executable. */
export const SIDECAR_BIN = fileURLToPath(new URL("../../../packages/toolrelay/dist/sidecar/bin.js", import.meta.url));

export interface SidecarProcess {
  child: ChildProcess;
  host: FrameHost;
  stderr(): string;
  /** Resolves with the exit code once the process is gone. */
  exited: Promise<number | null>;
  /** SIGKILL, unless it is gone already. */
  kill(): void;
}

export function spawnSidecarProcess(args: readonly string[] = []): SidecarProcess {
  if (!existsSync(SIDECAR_BIN))
    throw new Error("packages/toolrelay/dist/sidecar/bin.js is missing: run `npm run build` first (npm test does)");
  const child = spawn(process.execPath, [SIDECAR_BIN, ...args], { stdio: ["pipe", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "" } });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    host: new FrameHost(child.stdin!, child.stdout!),
    stderr: () => stderr,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
