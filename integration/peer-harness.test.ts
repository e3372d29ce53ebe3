/**
 * Proves the real-peer harness: the scripted model server and the real Letta Code app-server
 * start, a raw-ws external tool round trip works, the model's next request carries the tool
 * result, and every process the harness starts is gone afterwards.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { startLettaListener } from "./support/letta-listener-process.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { connectRawPeerClient, type RawPeerClient } from "../test/support/raw-peer-client.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../test/support/scripted-model-server.js";
import { letTimePass, until } from "../test/support/wait.js";

const GET_WEATHER = {
  name: "get_weather",
  description: "Get the current weather for a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string", description: "City name, e.g. Paris" } },
    required: ["city"],
  },
};

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function startRuntime(client: RawPeerClient, modelHandle: string, name: string) {
  const response = await client.request(
    {
      type: "runtime_start",
      request_id: `runtime-start-${name}`,
      create_agent: { body: { name, model: modelHandle } },
      create_conversation: {},
      mode: "unrestricted",
      external_tools: [{ tools: [GET_WEATHER] }],
    },
    { timeoutMs: 15_000, responseType: "runtime_start_response" },
  );
  expect(response).toMatchObject({ success: true, runtime: { agent_id: expect.any(String), conversation_id: expect.any(String) } });
  return response.runtime as { agent_id: string; conversation_id: string };
}

function sendUserMessage(client: RawPeerClient, runtime: unknown, id: string, text: string) {
  return client.request(
    {
      type: "input",
      request_id: `input-${id}`,
      runtime,
      payload: { kind: "create_message", messages: [{ role: "user", content: text, client_message_id: `cm-${id}` }] },
    },
    { timeoutMs: 10_000, responseType: "input_accepted" },
  );
}

describe("real peer harness", () => {
  let model: ScriptedModelServer;
  let peer: LettaAppServer;
  const clients: RawPeerClient[] = [];

  beforeAll(async () => {
    model = await startScriptedModelServer();
    peer = await startLettaAppServer({ modelUrl: model.url });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await peer?.stop();
    await model?.close();
  });

  it("serves /readyz and app_server_info over the socket", async () => {
    expect(peer.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws$/);
    const ready = await fetch(`${peer.httpUrl}/readyz`, { signal: AbortSignal.timeout(5_000) });
    expect(await ready.text()).toBe("ok\n");

    const client = await connectRawPeerClient(peer.url);
    clients.push(client);
    const info = await client.request({ type: "app_server_info", request_id: "info-1" }, { timeoutMs: 10_000 });
    expect(info).toMatchObject({
      type: "app_server_info_response",
      success: true,
      letta_code_version: "0.32.18",
      protocol_version: 1,
      capabilities: { runtime_external_tools_update: true, split_channels: false },
    });
  });

  it("round-trips an external tool call and gives the model the result", async () => {
    model.setScript((request) => {
      if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults[0]?.text}` };
      if (request.lastUserText.includes("weather")) {
        return { toolCalls: [{ id: "call_harness_1", name: "get_weather", arguments: { city: "Paris" } }] };
      }
      return { text: "pong" };
    });
    const client = await connectRawPeerClient(peer.url);
    clients.push(client);
    const runtime = await startRuntime(client, model.modelHandle, "harness-round-trip");
    const firstModelRequest = model.requests.length;

    const mark = client.received.length;
    await sendUserMessage(client, runtime, "round-trip", "What is the weather in Paris?");
    const call = await client.waitFor((frame) => frame.type === "external_tool_call_request", {
      timeoutMs: 15_000,
      fromIndex: mark,
    });
    expect(call).toMatchObject({
      request_id: expect.stringMatching(/^external-tool-/),
      runtime,
      tool_call_id: "call_harness_1",
      tool_name: "get_weather",
      input: { city: "Paris" },
    });
    // The model was offered our tool with our schema, next to the built-ins.
    const offered = model.requests[firstModelRequest]!.tools.find((tool) => tool.function.name === "get_weather");
    expect(offered?.function.parameters).toEqual(GET_WEATHER.parameters);

    client.send({
      type: "external_tool_call_response",
      request_id: call.request_id,
      result: { content: [{ type: "text", text: "Sunny, 21 °C" }] },
    });
    const finished = await client.waitFor((frame) => frame.type === "turn_finished", { timeoutMs: 15_000, fromIndex: mark });
    expect(finished).toMatchObject({ stop_reason: "end_turn", runtime });

    const followUp = await model.waitForRequest((request) => request.lastMessage?.role === "tool", {
      fromIndex: firstModelRequest,
      timeoutMs: 1_000,
    });
    expect(followUp.toolResults).toEqual([expect.objectContaining({ toolCallId: "call_harness_1", text: "Sunny, 21 °C" })]);
    const answer = client.received
      .slice(mark)
      .find((frame) => frame.type === "stream_delta" && (frame.delta as { message_type?: string }).message_type === "assistant_message");
    expect(answer).toMatchObject({ delta: { content: [{ type: "text", text: "done: Sunny, 21 °C" }] } });
  });

  it("delivers two tool calls from one model reply one after the other", async () => {
    model.setScript((request) => {
      if (request.lastMessage?.role === "tool") {
        return { text: `done: ${request.toolResults.map((result) => result.text).join(" | ")}` };
      }
      return {
        text: "Checking both.",
        toolCalls: [
          { name: "get_weather", arguments: { city: "Oslo" } },
          { name: "get_weather", arguments: { city: "Lima" } },
        ],
      };
    });
    const client = await connectRawPeerClient(peer.url);
    clients.push(client);
    const runtime = await startRuntime(client, model.modelHandle, "harness-two-calls");
    const mark = client.received.length;
    const isCall = (frame: Record<string, unknown>) => frame.type === "external_tool_call_request";

    await sendUserMessage(client, runtime, "two-calls", "Oslo and Lima?");
    const first = await client.waitFor(isCall, { timeoutMs: 15_000, fromIndex: mark });
    await letTimePass(200); // on purpose: the second call may not come before the first is answered
    expect(client.received.slice(mark).filter(isCall)).toHaveLength(1);

    client.send({ type: "external_tool_call_response", request_id: first.request_id, error: "service down" });
    const second = await client.waitFor((frame) => isCall(frame) && frame.request_id !== first.request_id, {
      timeoutMs: 15_000,
      fromIndex: mark,
    });
    expect([first.input, second.input]).toEqual([{ city: "Oslo" }, { city: "Lima" }]);
    client.send({
      type: "external_tool_call_response",
      request_id: second.request_id,
      result: { content: [{ type: "text", text: "unknown city" }], is_error: true },
    });
    await client.waitFor((frame) => frame.type === "turn_finished", { timeoutMs: 15_000, fromIndex: mark });
    const followUp = model.requests[model.requests.length - 1]!;
    expect(followUp.toolResults.map((result) => result.text)).toEqual(["External tool execution error: service down", "unknown city"]);
  });

  it("stops: the process exits, its HOME is removed, stop() is idempotent", async () => {
    const extra = await startLettaAppServer({ modelUrl: model.url });
    expect(isAlive(extra.pid)).toBe(true);
    expect(existsSync(extra.home)).toBe(true);
    expect(childProcessIds()).toContain(extra.pid);
    await extra.stop();
    await extra.stop();
    expect(isAlive(extra.pid)).toBe(false);
    expect(existsSync(extra.home)).toBe(false);
  });

  it("fails loudly, with the output, when the server is not up in time, and cleans up", async () => {
    const failing = startLettaAppServer({ modelUrl: model.url, startTimeoutMs: 1 });
    await expect(failing).rejects.toThrow(/no `Listening on ws:\/\/…` line within 1 ms[\s\S]*--- stdout ---/);
  });

  it("kills the app-server when the test process dies without stopping it", async () => {
    const probePath = fileURLToPath(new URL("./support/orphan-probe.ts", import.meta.url));
    const probe = spawn(process.execPath, ["--import", "tsx", probePath], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    probe.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
    probe.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
    const probeExited = new Promise((resolve) => probe.once("exit", resolve));
    let peerPid = 0;
    let peerHome = "";
    try {
      await until(
        () => /PEER \d+ \S+/.test(output) || probe.exitCode !== null,
        () => `probe output (${output})`,
        30_000,
        50,
      );
      const match = output.match(/PEER (\d+) (\S+)/);
      expect(match, output).not.toBeNull();
      peerPid = Number(match![1]);
      peerHome = match![2]!;
      expect(isAlive(peerPid)).toBe(true);

      probe.kill("SIGKILL");
      await probeExited;
      await until(() => !isAlive(peerPid), "the orphaned app-server to be killed", 5_000, 50);
      await until(() => !existsSync(peerHome), "the orphan's HOME to be removed", 5_000, 50);
    } finally {
      probe.kill("SIGKILL");
      if (peerPid && isAlive(peerPid)) process.kill(peerPid, "SIGKILL");
      if (peerHome) rmSync(peerHome, { recursive: true, force: true });
    }
  });

  it("starts the real listener against a minimal relay stub and stops it", async () => {
    const registrations: Array<{ authorization?: string; body: Record<string, unknown> }> = [];
    const upgrades: Array<{ url?: string; authorization?: string }> = [];
    const sockets = new WebSocketServer({ noServer: true });
    const relay = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        if (request.method === "POST" && request.url === "/v1/environments/register") {
          registrations.push({ authorization: request.headers.authorization, body: JSON.parse(body) });
          const port = (relay.address() as AddressInfo).port;
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ connectionId: "harness-env-1", wsUrl: `ws://127.0.0.1:${port}/listener` }));
          return;
        }
        response.writeHead(404).end();
      });
    });
    relay.on("upgrade", (request, socket, head) => {
      upgrades.push({ url: request.url, authorization: request.headers.authorization });
      sockets.handleUpgrade(request, socket, head, () => {});
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", () => resolve()));
    const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    try {
      const listener = await startLettaListener({ relayUrl, envName: "harness-env", modelUrl: model.url, apiKey: "key-1" });
      try {
        expect(registrations).toEqual([
          {
            authorization: "Bearer key-1",
            body: expect.objectContaining({ deviceId: expect.any(String), connectionName: "harness-env" }),
          },
        ]);
        expect(upgrades).toEqual([
          { url: expect.stringMatching(/^\/listener\?.*connectionName=harness-env/), authorization: "Bearer key-1" },
        ]);
      } finally {
        await listener.stop();
      }
      expect(await listener.exited).toEqual({ code: 0, signal: null });
      expect(existsSync(listener.home)).toBe(false);
    } finally {
      for (const socket of sockets.clients) socket.terminate();
      sockets.close();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  });

  it("leaves no child process behind once everything is stopped", async () => {
    const pid = peer.pid;
    await Promise.all(clients.map((client) => client.close()));
    await peer.stop();
    await model.close();
    expect(isAlive(pid)).toBe(false);
    // CLI processes and their reapers are our children; none may remain.
    await until(
      () => childProcessIds().length === 0,
      () => `no children (have ${childProcessIds().join(", ")})`,
      3_000,
      50,
    );
  });
});

/** Our child processes that the harness started: CLI processes and their reapers. */
function childProcessIds(): number[] {
  const text = execFileSync("ps", ["-A", "-o", "pid=,ppid=,args="], { encoding: "utf8" });
  return text
    .split("\n")
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((match): match is RegExpMatchArray => match !== null)
    .filter((match) => Number(match[2]) === process.pid)
    .filter((match) => /letta-peer|toolrelay-peer-reaper/.test(match[3]!))
    .map((match) => Number(match[1]));
}
