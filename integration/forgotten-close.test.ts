/**
 * A script that forgets `close()` still exits (issue 24, item 3): an idle session holds no socket,
 * timer or child process of its own ref'd, so a child process that runs one turn on the real
 * app-server and ends without close() exits by itself. On a `spawn` backend the server the SDK
 * started goes with it (killed when the process exits).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LETTA_CLI, LETTA_NODE_BINARY, startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../test/support/scripted-model-server.js";
import { until } from "../test/support/wait.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const home = mkdtempSync(join(tmpdir(), "toolrelay-forgotten-close-"));

beforeAll(async () => {
  model = await startScriptedModelServer({
    script: (request) =>
      request.lastMessage?.role === "tool"
        ? { text: `done: ${request.toolResults[0]?.text ?? ""}` }
        : { toolCalls: [{ name: "echo", arguments: { text: "hello" } }] },
  });
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await model?.close();
  rmSync(home, { recursive: true, force: true });
});

interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** ms from the script's last line to the process's exit. */
  exitAfterDoneMs: number;
  /** The child processes the script had when it printed its last line. */
  children: number[];
}

/** Run the fixture; a child still alive after 30 s is killed (and the test fails on its exit time). */
function runChild(args: string[]): Promise<ChildRun> {
  const child = spawn(process.execPath, ["--import", "tsx", "integration/fixtures/forgotten-close-child.ts", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let doneAt = 0;
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    if (doneAt === 0 && /done \d+/.test(stdout)) doneAt = Date.now();
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("exit", (code) => {
      clearTimeout(killer);
      const children = /children ([\d,]*)/.exec(stdout)?.[1] ?? "";
      resolve({
        code,
        stdout,
        stderr,
        exitAfterDoneMs: doneAt === 0 ? Number.POSITIVE_INFINITY : Date.now() - doneAt,
        children: children.split(",").filter(Boolean).map(Number),
      });
    });
  });
}

/** Whether process `pid` is alive (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

it("a script that runs a turn on a running app-server and forgets close() exits by itself within 2 s", async () => {
  const run = await runChild(["url", server.url, model.modelHandle]);
  expect(run.stderr).toBe("");
  expect(run.stdout).toContain("turn end_turn: done: hello");
  expect(run.code).toBe(0);
  expect(run.exitAfterDoneMs).toBeLessThan(2_000);
});

it("a script on a spawn backend that forgets close() exits by itself, and the server it spawned is gone", async () => {
  const run = await runChild(["spawn", LETTA_NODE_BINARY, LETTA_CLI, model.url, home, model.modelHandle]);
  expect(run.stderr).toBe("");
  expect(run.stdout).toContain("turn end_turn: done: hello");
  expect(run.code).toBe(0);
  expect(run.exitAfterDoneMs).toBeLessThan(2_000);
  expect(run.children).toHaveLength(1); // the server the SDK spawned was running when the script ended
  await until(() => !alive(run.children[0]!), "the spawned server exits with the script", 5_000);
}, 90_000);
