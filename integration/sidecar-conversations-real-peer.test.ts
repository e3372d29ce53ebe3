/**
 * The `toolrelay-sidecar` executable (packages/toolrelay/dist/sidecar/bin.js) driving the REAL Letta Code app-server
 * (0.32.18) with a scripted model that takes real time per reply: an abort while the model is
 * still answering must not end the next turn (the runtime's late `turn_finished` without `run_id`
 * belongs to the aborted turn), and turns sent back to back each end with the model's own text.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../test/support/scripted-model-server.js";
import { FrameHost } from "../test/sidecar/support/frame-host.js";

const bin = fileURLToPath(new URL("../packages/toolrelay/dist/sidecar/bin.js", import.meta.url));
let model: ScriptedModelServer;
let server: LettaAppServer;
let child: ChildProcess;
let host: FrameHost;

beforeAll(async () => {
  if (!existsSync(bin)) throw new Error("packages/toolrelay/dist/sidecar/bin.js is missing: run `npm run build` first (npm test does)");
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
  child = spawn(process.execPath, [bin], { stdio: ["pipe", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "" } });
  host = new FrameHost(child.stdin!, child.stdout!);
  await host.greet();
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    host.send({ type: "shutdown" });
    await new Promise((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(undefined);
      }, 3_000);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
  }
  await server?.stop();
  await model?.close();
});

const turnOf = (text: string) => /turn (\d+)/.exec(text)?.[1] ?? "?";

describe("toolrelay-sidecar against the real app-server, many turns", () => {
  it("abort while the model answers: that turn ends cancelled, the next one gets its own real answer", async () => {
    model.setScript((request) => ({ text: `answer to turn ${turnOf(request.lastUserText)}`, delayMs: 2_500 }));
    await host.open("abort", server.url, [], { agent: { create: { model: model.modelHandle } } });
    host.send({ type: "send", session: "abort", turn: "t1", message: "turn 1" });
    await new Promise((resolve) => setTimeout(resolve, 600));
    host.send({ type: "abort", session: "abort", turn: "t1" });
    expect(await host.next({ type: "turn_end", turn: "t1" }, { timeoutMs: 15_000 })).toMatchObject({ fault: "cancelled" });
    host.send({ type: "send", session: "abort", turn: "t2", message: "turn 2" });
    expect(await host.next({ type: "turn_end", turn: "t2" }, { timeoutMs: 20_000 })).toMatchObject({
      fault: "ok",
      text: "answer to turn 2",
    });
    host.send({ type: "close_session", session: "abort" });
    await host.next({ type: "session_closed", session: "abort" });
  }, 60_000);

  it("three turns back to back with a 1.5 s model and a tool: each ends with the model's final text", async () => {
    model.setScript((request) => {
      if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults[0]!.text}`, delayMs: 1_500 };
      return { text: "Working. ", toolCalls: [{ name: "echo", arguments: { n: turnOf(request.lastUserText) } }], delayMs: 1_500 };
    });
    const echo = { name: "echo", description: "Echoes its input", input_schema: { type: "object" } };
    await host.open("many", server.url, [echo], { agent: { create: { model: model.modelHandle } } });
    host.answerCalls((call) => ({ type: "tool_result", content: [{ type: "text", text: JSON.stringify(call.input) }] }));
    for (const n of ["1", "2", "3"]) {
      host.send({ type: "send", session: "many", turn: `m${n}`, message: `turn ${n}` });
      expect(await host.next({ type: "turn_end", turn: `m${n}` }, { timeoutMs: 20_000 })).toMatchObject({
        fault: "ok",
        text: `Working. done: {"n":"${n}"}`,
      });
    }
    host.send({ type: "close_session", session: "many" });
    await host.next({ type: "session_closed", session: "many" });
    expect(host.problems).toEqual([]);
  }, 60_000);
});
