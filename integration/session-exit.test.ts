/**
 * After close(), nothing of ours keeps the process alive (P6): a child process
 * opens a session on the real app-server, runs a turn, leaves a tool call
 * hanging, closes, and must exit by itself within 1 s.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;

beforeAll(async () => {
  model = await startScriptedModelServer({
    script: (request) => {
      if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults[0]?.text ?? ""}` };
      if (request.lastUserText.includes("hang")) return { toolCalls: [{ name: "hang_forever", arguments: {} }] };
      return { toolCalls: [{ name: "echo", arguments: { text: "hello" } }] };
    },
  });
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await model?.close();
});

it("the process exits within 1 s of close(), with a tool call hanging at close", async () => {
  const child = spawn(process.execPath, ["--import", "tsx", "integration/fixtures/session-exit-child.ts", server.url, model.modelHandle], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let closedAt = 0;
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    const match = /closed (\d+)/.exec(stdout);
    if (match && closedAt === 0) closedAt = Date.now();
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = await new Promise<{ code: number | null; at: number }>((resolve) => {
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("exit", (code) => {
      clearTimeout(killer);
      resolve({ code, at: Date.now() });
    });
  });
  expect(stderr).toBe("");
  expect(exit.code).toBe(0);
  expect(stdout).toContain("turn end_turn: done: hello");
  expect(stdout).toContain("pending 1");
  expect(stdout).toContain("second turn: ABORTED");
  expect(closedAt).toBeGreaterThan(0);
  expect(exit.at - closedAt).toBeLessThan(1_000);
});
