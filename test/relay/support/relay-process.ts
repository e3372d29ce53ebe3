/**
 * The relay CLI (packages/relay/src/bin.ts through tsx) in its own process, with a keys file of tenants,
 * for tests that measure the relay from outside (memory, floods): its address, its stats through
 * the `/_relay/stats` test hook, and a clean stop. `TOOLRELAY_RELAY_NODE_FLAGS` adds node flags
 * to it (e.g. `--cpu-prof` while investigating).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { httpJson } from "./http-json.js";

const BIN = fileURLToPath(new URL("../../../packages/relay/src/bin.ts", import.meta.url));
const NODE_FLAGS = process.env.TOOLRELAY_RELAY_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];

export interface RelayStatsAnswer {
  memory: NodeJS.MemoryUsage;
  tenant: { tenant: string; environments: number; sessions: number; outstandingCalls: number; unackedBytes: number };
  connections: Record<string, number>;
}

export interface RelayProcess {
  httpUrl: string;
  url: string;
  port: number;
  pid: number;
  /** `GET /_relay/stats` as `apiKey`'s tenant: process memory, that tenant's usage, connection counters; `gc` collects garbage first (needs `--expose-gc`). */
  stats(apiKey: string, options?: { gc?: boolean }): Promise<RelayStatsAnswer>;
  output(): string;
  stop(): Promise<void>;
}

/** Starts the relay CLI with `tenants` (name → keys) and extra flags; test hooks are on. */
export async function startRelayProcess(
  tenants: Record<string, string[]>,
  args: string[] = [],
  nodeFlags: string[] = [],
): Promise<RelayProcess> {
  const folder = mkdtempSync(join(tmpdir(), "toolrelay-relay-"));
  const keysFile = join(folder, "keys");
  writeFileSync(
    keysFile,
    Object.entries(tenants)
      .flatMap(([tenant, keys]) => keys.map((key) => `${tenant} ${key}`))
      .join("\n"),
  );
  const child = spawn(
    process.execPath,
    [...NODE_FLAGS, ...nodeFlags, "--import", "tsx", BIN, "--api-keys-file", keysFile, "--enable-test-hooks", ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(folder, { recursive: true, force: true });
  };
  const httpUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the relay CLI did not start within 30 s:\n${output}`)), 30_000);
    const check = (): void => {
      const match = /Relay listening on (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout.on("data", check);
    child.once("exit", () => {
      clearTimeout(timer);
      reject(new Error(`the relay CLI exited:\n${output}`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return {
    httpUrl,
    url: httpUrl.replace(/^http/, "ws"),
    port: Number(new URL(httpUrl).port),
    pid: child.pid ?? -1,
    async stats(apiKey, options = {}) {
      const { status, json } = await httpJson(`${httpUrl}/_relay/stats${options.gc ? "?gc=1" : ""}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      if (status !== 200) throw new Error(`/_relay/stats: HTTP ${status}`);
      return json as RelayStatsAnswer;
    },
    output: () => output,
    stop,
  };
}
