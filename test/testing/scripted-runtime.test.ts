import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import {
  startScriptedRuntime,
  type ScriptedRuntime,
  type StartScriptedRuntimeOptions,
} from "../../packages/toolrelay/src/testing/index.js";
import { connectClient, startFrame, terminateClients, type Frame } from "./scripted-runtime-test-client.js";

let runtime: ScriptedRuntime | undefined;

afterEach(async () => {
  terminateClients();
  await runtime?.close();
  runtime = undefined;
});

async function start(options: Partial<StartScriptedRuntimeOptions> = {}): Promise<ScriptedRuntime> {
  runtime = await startScriptedRuntime({ script: async (turn) => turn.say("pong"), ...options });
  return runtime;
}

const httpBase = (server: ScriptedRuntime): string => server.url.replace("ws://", "http://").replace(/\/ws$/, "");

describe("scripted runtime: server and upgrade rules", () => {
  it("listens on a loopback ephemeral port at /ws and counts connections", async () => {
    const server = await start();
    expect(server.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws$/);
    expect(server.port).toBeGreaterThan(0);
    const client = await connectClient(server.url);
    expect(server.connections).toBe(1);
    await client.close();
    await expect.poll(() => server.connections, { timeout: 2000 }).toBe(0);
  });

  it("requires the bearer token when authToken is set (401 otherwise)", async () => {
    const server = await start({ authToken: "s3cret" });
    await expect(connectClient(server.url)).rejects.toThrow(/401/);
    await expect(connectClient(server.url, { authorization: "Bearer wrong" })).rejects.toThrow(/401/);
    await expect(connectClient(server.url, { authorization: "Basic s3cret" })).rejects.toThrow(/401/);
    const client = await connectClient(server.url, { authorization: "Bearer s3cret" });
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    // With auth configured, an Origin header is allowed (a native client with a token).
    await connectClient(server.url, { authorization: "Bearer s3cret", origin: "http://example.test" });
    expect(server.connections).toBe(2);
    const info = await fetch(`${httpBase(server)}/app-server-info`);
    expect(info.status).toBe(401);
    const authorized = await fetch(`${httpBase(server)}/app-server-info`, { headers: { authorization: "Bearer s3cret" } });
    expect(await authorized.json()).toMatchObject({ type: "app_server_info_response", request_id: "http-info" });
  });

  it("rejects an Origin header without auth (403), other paths (404) and a channel parameter (426)", async () => {
    const server = await start();
    await expect(connectClient(server.url, { origin: "http://example.test" })).rejects.toThrow(/403/);
    await expect(connectClient(server.url.replace(/\/ws$/, "/other"))).rejects.toThrow(/404/);
    await expect(connectClient(`${server.url}?channel=control`)).rejects.toThrow(/426/);
    const root = await connectClient(server.url.replace(/\/ws$/, "/"));
    expect(root.socket.readyState).toBe(root.socket.OPEN);
    expect((await fetch(`${httpBase(server)}/readyz`)).status).toBe(200);
    expect((await fetch(`${httpBase(server)}/readyz`, { headers: { origin: "http://example.test" } })).status).toBe(403);
  });

  it("pings and terminates a socket that stops answering (3 missed pongs)", async () => {
    const server = await start({ heartbeatIntervalMs: 20 });
    const alive = await connectClient(server.url);
    const silent = new WebSocket(server.url, { autoPong: false });
    const closed = new Promise<number>((resolve) => silent.once("close", (code) => resolve(code)));
    try {
      await new Promise((resolve, reject) => {
        silent.once("open", resolve);
        silent.once("error", reject);
      });
      const deadline = new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error("not terminated within 2 s")), 2000));
      expect(await Promise.race([closed, deadline])).toBe(1006);
      expect(alive.socket.readyState).toBe(WebSocket.OPEN);
    } finally {
      silent.terminate();
    }
  });

  it("closes a socket that sends a message over maxPayloadBytes (1009)", async () => {
    const server = await start({ maxPayloadBytes: 1024 });
    const client = await connectClient(server.url);
    client.sendText(JSON.stringify({ type: "app_server_info", request_id: "x".repeat(2048) }));
    expect(await client.closed()).toBe(1009);
  });

  it("refuses a non-loopback host without authToken", async () => {
    await expect(startScriptedRuntime({ script: () => undefined, host: "0.0.0.0" })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
  });

  it("answers app_server_info like the real app-server", async () => {
    const server = await start({ version: "9.9.9" });
    const client = await connectClient(server.url);
    client.send({ type: "app_server_info", request_id: "info-1" });
    expect(await client.waitFor((frame) => frame.type === "app_server_info_response")).toEqual({
      type: "app_server_info_response",
      request_id: "info-1",
      success: true,
      backend: "local",
      letta_code_version: "9.9.9",
      protocol_version: 1,
      capabilities: {
        agent_management: true,
        conversation_management: true,
        memory_management: true,
        runtime_start: true,
        launch_subagent: true,
        runtime_workspace_sandbox: true,
        runtime_external_tools_update: true,
        structured_outputs: false,
        split_channels: false,
      },
    });
  });

  it("ignores invalid frames without any reply and keeps the socket open", async () => {
    const server = await start();
    const client = await connectClient(server.url);
    client.sendText("{not json");
    client.sendText("[1,2,3]");
    client.send({ type: "ping" });
    client.send({ type: "no_such_command", request_id: "x" });
    client.send({
      type: "runtime_start",
      request_id: "bad-tools",
      create_agent: { body: {} },
      external_tools: [{ tools: [{ name: "t", parameters: {} }] }],
    });
    client.send({
      type: "runtime_external_tools_update",
      request_id: "dup",
      updates: [
        {
          runtimes: [
            { agent_id: "a", conversation_id: "c" },
            { agent_id: "a", conversation_id: "c" },
          ],
          external_tools: [],
        },
      ],
    });
    client.send({ type: "external_tool_call_response", request_id: "external-tool-unknown", result: { content: [] } });
    client.send({ type: "external_tool_call_response", request_id: "external-tool-unknown", result: { content: "text" } });
    client.send({ type: "app_server_info", request_id: "" });
    client.send({ type: "input", runtime: { agent_id: "", conversation_id: "c" }, payload: { kind: "create_message", messages: [] } });
    client.send({ type: "app_server_info", request_id: "after" });
    const reply = await client.waitFor((frame) => frame.type === "app_server_info_response");
    expect(reply.request_id).toBe("after");
    expect(client.frames).toHaveLength(1);
    expect(server.frames).toHaveLength(11);
    expect(server.frames[0]).toMatchObject({ type: undefined, frame: undefined, text: "{not json" });
    expect(server.registrations()).toEqual([]);
  });

  it("reports a bad input payload as a non-terminal loop_error, without input_accepted", async () => {
    const server = await start();
    const client = await connectClient(server.url);
    const scope = { agent_id: "agent-x", conversation_id: "default" };
    client.send({ type: "input", request_id: "bad-1", runtime: scope, payload: { kind: "weird" } });
    const error = await client.waitFor((frame) => frame.delta?.message_type === "loop_error");
    expect(error.delta).toMatchObject({ message: "Unsupported input payload kind: weird", stop_reason: "error", is_terminal: false });
    client.send({
      type: "input",
      request_id: "bad-2",
      runtime: scope,
      payload: { kind: "create_message", messages: [{ type: "approval", approvals: [] }] },
    });
    expect(await client.waitFor((frame) => frame.type === "input_accepted")).toMatchObject({
      request_id: "bad-2",
      accepted: false,
      error: "Approval payloads require approval_response",
    });
    expect(client.frames.filter((frame) => frame.type === "input_accepted")).toHaveLength(1);
  });
});

describe("scripted runtime: runtime_start and registrations", () => {
  it("answers bad runtime_start commands with the real error strings", async () => {
    const server = await start();
    const client = await connectClient(server.url);
    const cases: Array<[Frame, string]> = [
      [{ agent_id: "agent-1", create_agent: { body: {} } }, "runtime_start agent_id cannot be combined with create_agent"],
      [{}, "runtime_start requires an agent or conversation"],
      [
        { agent_id: "agent-1", conversation_id: "c", create_conversation: {} },
        "runtime_start conversation_id cannot be combined with create_conversation",
      ],
      [{ conversation_id: "default" }, "Agent-free runtimes require a persisted conversation"],
    ];
    for (const [index, [fields, error]] of cases.entries()) {
      client.send({ type: "runtime_start", request_id: `rs-${index}`, ...fields });
      const response = await client.waitFor((frame) => frame.request_id === `rs-${index}`);
      expect(response).toEqual({
        type: "runtime_start_response",
        request_id: `rs-${index}`,
        success: false,
        runtime: null,
        agent: null,
        conversation: null,
        created: { agent: false, conversation: false },
        error,
      });
    }
    client.send(startFrame("rs-ok"));
    const ok = await client.waitFor((frame) => frame.request_id === "rs-ok");
    client.send({ type: "runtime_start", request_id: "rs-other", agent_id: "agent-other", conversation_id: ok.runtime.conversation_id });
    expect(await client.waitFor((frame) => frame.request_id === "rs-other")).toMatchObject({
      success: false,
      error: `Conversation ${ok.runtime.conversation_id} belongs to ${ok.runtime.agent_id}, not agent-other`,
    });
    client.send({ type: "runtime_start", request_id: "rs-default", agent_id: ok.runtime.agent_id, conversation_id: "default" });
    expect(await client.waitFor((frame) => frame.request_id === "rs-default")).toMatchObject({
      success: true,
      runtime: { agent_id: ok.runtime.agent_id, conversation_id: "default" },
      conversation: { id: "default", agent_id: ok.runtime.agent_id },
      created: { agent: false, conversation: false },
    });
  });

  it("replaces a connection's tools per runtime: runtime_start, update, omission", async () => {
    const server = await start();
    const client = await connectClient(server.url);
    client.send(startFrame("rs-1", [{ name: "a" }, { name: "b" }]));
    const { runtime: scope } = await client.waitFor((frame) => frame.request_id === "rs-1");
    const names = (): string[] => server.registrations().map((registration) => registration.name);
    expect(names()).toEqual(["a", "b"]);
    expect(server.registrations()[0]).toMatchObject({ connectionId: "app-server-0", runtime: scope, description: "a" });
    const restart = (requestId: string, tools?: unknown[]): void =>
      client.send({
        type: "runtime_start",
        request_id: requestId,
        agent_id: scope.agent_id,
        conversation_id: scope.conversation_id,
        ...(tools ? { external_tools: tools } : {}),
      });
    restart("rs-2", [{ tools: [{ name: "c", description: "c", parameters: {} }] }]);
    await client.waitFor((frame) => frame.request_id === "rs-2");
    expect(names()).toEqual(["c"]);
    const update = (requestId: string, tools: unknown[]): void =>
      client.send({
        type: "runtime_external_tools_update",
        request_id: requestId,
        updates: [{ runtimes: [scope], external_tools: tools }],
      });
    update("up-1", [{ scope_id: "s", tools: [{ name: "d", description: "d", parameters: {} }] }]);
    expect(await client.waitFor((frame) => frame.request_id === "up-1")).toEqual({
      type: "runtime_external_tools_update_response",
      request_id: "up-1",
      success: true,
    });
    expect(server.registrations()).toMatchObject([{ name: "d", scopeId: "s" }]);
    update("up-2", []);
    await client.waitFor((frame) => frame.request_id === "up-2");
    expect(names()).toEqual([]);
    restart("rs-3", [{ tools: [{ name: "e", description: "e", parameters: {} }] }]);
    await client.waitFor((frame) => frame.request_id === "rs-3");
    restart("rs-4");
    await client.waitFor((frame) => frame.request_id === "rs-4");
    expect(names()).toEqual([]);
  });

  it("drops every connection on dropConnections and forgets their registrations", async () => {
    const server = await start();
    const first = await connectClient(server.url);
    const second = await connectClient(server.url);
    first.send(startFrame("rs-1", [{ name: "a" }]));
    await first.waitFor((frame) => frame.request_id === "rs-1");
    server.dropConnections(4000);
    expect(await first.closed()).toBe(4000);
    expect(await second.closed()).toBe(4000);
    await expect.poll(() => server.registrations().length, { timeout: 2000 }).toBe(0);
    const third = await connectClient(server.url);
    third.send(startFrame("rs-3", [{ name: "a" }]));
    await third.waitFor((frame) => frame.request_id === "rs-3");
    expect(server.registrations()).toMatchObject([{ connectionId: "app-server-2" }]);
  });
});
