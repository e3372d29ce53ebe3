import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import {
  MIN_LETTA_CODE_VERSION,
  compareVersions,
  explainSpawnFailure,
  readAppServerVersion,
  versionOfLettaCode,
} from "../../packages/toolrelay/src/backends/letta-code-version.js";
import { isToolrelayError, ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import type { Timers } from "../../packages/toolrelay/src/internal/timers.js";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { createSession } from "../../packages/toolrelay/src/session/create-session.js";
import { startScriptedRuntime, type ScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";

const OLD_LETTA = fileURLToPath(new URL("../fixtures/letta-code/letta-0.25.9.mjs", import.meta.url));
const FAKE_SERVER = fileURLToPath(new URL("../fixtures/letta-code/listening-app-server.ts", import.meta.url));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function runtimeReporting(version: string): Promise<ScriptedRuntime> {
  const runtime = await startScriptedRuntime({ version, script: async () => undefined });
  cleanups.push(() => runtime.close());
  return runtime;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function refusal(promise: Promise<unknown>): Promise<ToolrelayError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isToolrelayError(error)) throw new Error(`expected a ToolrelayError, got ${String(error)}`);
  return error;
}

describe("compareVersions", () => {
  it.each([
    ["0.25.9", "0.32.18", -1],
    ["0.32.17", "0.32.18", -1],
    ["0.32.18", "0.32.18", 0],
    ["0.32.19", "0.32.18", 1],
    ["0.33.0", "0.32.18", 1],
    ["1.0.0", "0.32.18", 1],
    ["0.32.18-next.1", "0.32.18", -1],
    ["0.32.18", "0.32.18-next.1", 1],
    ["v0.40.2", "0.32.18", 1],
    ["0.32.9", "0.32.18", -1], // numbers, not strings
  ] as const)("%s against %s is %d", (left, right, expected) => {
    expect(compareVersions(left, right)).toBe(expected);
  });

  it.each(["", "latest", "0.32", "0.32.x", "0.32.18 (Letta Code)"])("does not judge %j", (text) => {
    expect(compareVersions(text, MIN_LETTA_CODE_VERSION)).toBeUndefined();
  });

  it("reads the version `letta --version` prints, and nothing else", () => {
    expect(versionOfLettaCode("0.25.9 (Letta Code)\n")).toBe("0.25.9");
    expect(versionOfLettaCode("0.32.18 (Letta Code)")).toBe("0.32.18");
    expect(versionOfLettaCode("TypeError: Unknown option '--version'\n\nNode.js v20.20.2\n")).toBeUndefined();
  });
});

describe("the app-server's version, on connect (backend.url)", () => {
  it("refuses an app-server older than the one toolrelay needs, naming both versions, before it opens a socket", async () => {
    const runtime = await runtimeReporting("0.31.12");
    const error = await refusal(createSession({ backend: { kind: "local", url: runtime.url }, agent: { id: "agent-1" } }));
    expect(error).toMatchObject({ code: "UNSUPPORTED_BACKEND", details: { found: "0.31.12", needed: MIN_LETTA_CODE_VERSION } });
    expect(error.message).toBe(
      `The app-server at ${runtime.url} is Letta Code 0.31.12, too old: toolrelay needs Letta Code ${MIN_LETTA_CODE_VERSION} or later. ` +
        "Letta Code 0.32 needs Node 22.19 or later; on an older Node, npm installs 0.25.9. " +
        "Install it with a Node 22 of its own: docs/getting-started.md, step 0.",
    );
    expect(runtime.frames).toEqual([]);
  });

  it("opens the session on the version toolrelay is tested against and on a newer one", async () => {
    for (const version of [MIN_LETTA_CODE_VERSION, "0.40.0"]) {
      const runtime = await runtimeReporting(version);
      const session = await createSession({ backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 }, agent: { id: "agent-1" } });
      cleanups.push(() => session.close());
      expect(session.agentId).toBe("agent-1");
    }
  });

  it("asks with the session's token, so a server that requires one still tells its version", async () => {
    const runtime = await startScriptedRuntime({ version: "0.30.28", authToken: "s3cret", script: async () => undefined });
    cleanups.push(() => runtime.close());
    expect(await readAppServerVersion(runtime.url, {}, systemTimers)).toBeUndefined(); // 401: not judged here; the link says UNAUTHORIZED
    const error = await refusal(createSession({ backend: { kind: "local", url: runtime.url, token: "s3cret" }, agent: { id: "agent-1" } }));
    expect(error).toMatchObject({ code: "UNSUPPORTED_BACKEND", details: { found: "0.30.28" } });
  });

  it("does not judge a server that reports no version: a WebSocket server with no /app-server-info", async () => {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    cleanups.push(() => new Promise<void>((done) => wss.close(() => done())));
    await new Promise((done) => wss.once("listening", done));
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`;
    expect(await readAppServerVersion(url, {}, systemTimers)).toBeUndefined();
  });

  it("gives up on a server that never answers when its deadline passes, and judges nothing", async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket)); // accepts the connection, never answers
    cleanups.push(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((done) => silent.close(() => done()));
    });
    await new Promise<void>((done) => silent.listen(0, "127.0.0.1", done));
    const deadlines: Array<() => void> = [];
    const timers: Timers = {
      setTimeout: (callback) => {
        deadlines.push(callback);
        return deadlines.length;
      },
      clearTimeout: () => undefined,
      now: () => 0,
    };
    const version = readAppServerVersion(`ws://127.0.0.1:${(silent.address() as AddressInfo).port}/ws`, {}, timers);
    expect(deadlines).toHaveLength(1);
    deadlines[0]!();
    expect(await version).toBeUndefined();
  });
});

describe("the spawned server's version (backend.spawn)", () => {
  it("says that a `letta` too old to have an app-server is too old, with the spawn's failure as the cause", async () => {
    const error = await refusal(
      createSession({
        backend: { kind: "local", spawn: { command: process.execPath, commandArgs: [OLD_LETTA] } },
        agent: { id: "agent-1" },
      }),
    );
    expect(error).toMatchObject({ code: "UNSUPPORTED_BACKEND", details: { found: "0.25.9", needed: MIN_LETTA_CODE_VERSION } });
    expect(error.message).toContain(`is Letta Code 0.25.9, too old: toolrelay needs Letta Code ${MIN_LETTA_CODE_VERSION} or later.`);
    expect(error.cause).toMatchObject({ code: "SPAWN_FAILED" });
    expect((error.cause as Error).message).toContain("Unknown option '--listen'");
  });

  it("refuses a spawned server whose app-server reports an old version, and stops it", async () => {
    const folder = mkdtempSync(join(tmpdir(), "toolrelay-version-"));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const pidFile = join(folder, "pid");
    const error = await refusal(
      createSession({
        backend: {
          kind: "local",
          spawn: {
            command: process.execPath,
            commandArgs: ["--import", "tsx", FAKE_SERVER],
            env: { LETTA_FAKE_VERSION: "0.31.12", LETTA_FAKE_PID_FILE: pidFile },
          },
        },
        agent: { id: "agent-1" },
      }),
    );
    expect(error).toMatchObject({ code: "UNSUPPORTED_BACKEND", details: { found: "0.31.12" } });
    expect(error.message).toMatch(/^The spawned server is Letta Code 0\.31\.12, too old/);
    expect(existsSync(pidFile)).toBe(true);
    expect(isRunning(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  });

  it("gives `letta --version` as long as a server start (the spawn's startupTimeoutMs, else 30 s): 0.25.9 took 12 s on a loaded machine", async () => {
    for (const [startupTimeoutMs, expected] of [
      [undefined, 30_000],
      [45_000, 45_000],
    ] as const) {
      const delays: number[] = [];
      const timers: Timers = {
        setTimeout: (callback, delayMs) => {
          delays.push(delayMs);
          return systemTimers.setTimeout(callback, delayMs);
        },
        clearTimeout: (handle) => systemTimers.clearTimeout(handle),
        now: () => Date.now(),
      };
      const spawnFailure = new ToolrelayError("SPAWN_FAILED", "letta exited before listening (code 1, signal null)");
      const options = { command: process.execPath, commandArgs: [OLD_LETTA], ...(startupTimeoutMs ? { startupTimeoutMs } : {}) };
      const error = await refusal(explainSpawnFailure(options, timers)(spawnFailure));
      expect(error).toMatchObject({ code: "UNSUPPORTED_BACKEND", cause: spawnFailure });
      expect(delays).toEqual([expected]);
    }
  });

  it("leaves any other spawn failure as it was (SPAWN_FAILED), even from a current Letta Code", async () => {
    const error = await refusal(
      createSession({
        backend: {
          kind: "local",
          spawn: {
            command: process.execPath,
            commandArgs: ["-e", 'if (process.argv.includes("--version")) console.log("0.32.18 (Letta Code)"); else process.exit(3)', "--"],
          },
        },
        agent: { id: "agent-1" },
      }),
    );
    expect(error).toMatchObject({ code: "SPAWN_FAILED" });
  });
});
