/**
 * The reference relay with the REAL Letta Code listener (letta-code 0.32.18, a separate process)
 * on its far side, a scripted OpenAI-compatible model, and a raw-ws "SDK" on the status sockets.
 * Covered in paired mode (what Letta Cloud uses) and one-socket mode: a whole turn with one
 * external tool call; the call pending across a relay-forced listener reconnect (answer after the
 * reconnect, and answer while the listener is away); across an SDK reconnect; and a 1008 close
 * making the listener register again; and another tenant's key, which can neither open the
 * environment's status sockets nor re-register the listener's device, while the listener goes on
 * undisturbed. Durations are printed at the end of each mode.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRelay, type Relay } from "../packages/relay/src/index.js";
import { startLettaListener, type LettaListener } from "./support/letta-listener-process.js";
import {
  messageText,
  startScriptedModelServer,
  type ModelRequest,
  type ScriptedModelServer,
} from "../test/support/scripted-model-server.js";
import type { JsonFrame } from "../test/relay/support/frame-log.js";
import { RawStatusClient } from "../test/relay/support/raw-status-client.js";
import { registerListener } from "../test/relay/support/fake-listener.js";
import { httpJson } from "../test/relay/support/http-json.js";
import { until } from "../test/support/wait.js";

const API_KEY = "relay-integration-key";
const OTHER_TENANT_KEY = "relay-integration-other-tenant-key";
const TOOL_NAME = "relay_echo";
const TOOL_TRIGGER = "please call relay_echo";

interface Runtime {
  agent_id: string;
  conversation_id: string;
}

/** Tool call when the user asks for it (optionally delayed), `done: <result>` after a tool result, else `pong`. */
function modelScript(toolCallDelayMs: () => number) {
  return (request: ModelRequest) => {
    if (request.lastMessage?.role === "tool") {
      return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
    }
    const lastUser = [...request.messages].reverse().find((message) => message.role === "user");
    const marker = new RegExp(`${TOOL_TRIGGER} with (\\S+)`).exec(messageText(lastUser?.content))?.[1];
    if (marker && request.toolNames.includes(TOOL_NAME)) {
      return { toolCalls: [{ name: TOOL_NAME, arguments: { text: marker } }], delayMs: toolCallDelayMs() };
    }
    return { text: "pong" };
  };
}

function sameRuntime(runtime: Runtime) {
  return (frame: JsonFrame): boolean => {
    const scope = frame.runtime as Partial<Runtime> | undefined;
    return scope?.agent_id === runtime.agent_id && scope.conversation_id === runtime.conversation_id;
  };
}

/** `promise`, or a rejection after `ms`; the timer is cleared either way. */
function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

describe.each(["paired", "single"] as const)("real Letta Code listener behind the relay (%s mode)", (mode) => {
  let relay: Relay;
  let model: ScriptedModelServer;
  let listener: LettaListener;
  let connectionId: string;
  let toolCallDelayMs = 0;
  let sessionCounter = 0;
  const durations: Record<string, number> = {};
  const clients: RawStatusClient[] = [];

  beforeAll(async () => {
    model = await startScriptedModelServer({ script: modelScript(() => toolCallDelayMs) });
    relay = await startRelay({ apiKeys: [API_KEY, OTHER_TENANT_KEY], listenerMode: mode });
    const started = Date.now();
    listener = await startLettaListener({ relayUrl: relay.httpUrl, envName: `relay-it-${mode}`, modelUrl: model.url, apiKey: API_KEY });
    durations["listener start-up to ready"] = Date.now() - started;
    const environment = relay.environments()[0];
    expect(environment).toMatchObject({ listenerConnected: true, listenerMode: mode, connectionName: `relay-it-${mode}` });
    connectionId = environment?.connectionId ?? "";
  });

  afterAll(async () => {
    for (const client of clients) client.terminate();
    await listener?.stop();
    await relay?.close();
    await model?.close();
    console.log(`[relay-listener ${mode}] durations (ms): ${JSON.stringify(durations)}`);
  });

  async function attachSdk(sessionId = `it-${mode}-${++sessionCounter}`, autoAck = true): Promise<RawStatusClient> {
    const client = await RawStatusClient.connect({ url: relay.url, connectionId, apiKey: API_KEY, sessionId, autoAck });
    clients.push(client);
    return client;
  }

  /** runtime_start: a new agent on the scripted model, a new conversation, unrestricted, one external tool. */
  async function startRuntime(sdk: RawStatusClient, label: string): Promise<Runtime> {
    const requestId = `start-${label}`;
    sdk.send({
      type: "runtime_start",
      request_id: requestId,
      create_agent: { body: { name: `relay-it-${label}`, model: model.modelHandle } },
      create_conversation: {},
      mode: "unrestricted",
      recover_approvals: false,
      force_device_status: true,
      client_info: { name: "relay-integration-test" },
      external_tools: [
        {
          tools: [
            {
              name: TOOL_NAME,
              description: "Echoes its text argument back.",
              parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
            },
          ],
        },
      ],
    });
    const response = await sdk.waitFor("runtime_start_response", { timeoutMs: 30_000, where: (frame) => frame.request_id === requestId });
    expect(response).toMatchObject({ success: true });
    return response.runtime as Runtime;
  }

  function sendInput(sdk: RawStatusClient, runtime: Runtime, label: string, marker: string): string {
    const requestId = `input-${label}`;
    sdk.send({
      type: "input",
      request_id: requestId,
      runtime,
      payload: { kind: "create_message", messages: [{ role: "user", content: `${TOOL_TRIGGER} with ${marker}` }] },
    });
    return requestId;
  }

  function answer(sdk: RawStatusClient, request: JsonFrame): void {
    const input = request.input as { text?: string };
    sdk.send({
      type: "external_tool_call_response",
      request_id: request.request_id,
      result: { content: [{ type: "text", text: `echo: ${input.text}` }] },
    });
  }

  async function expectTurnFinished(sdk: RawStatusClient, runtime: Runtime, marker: string, from = 0): Promise<void> {
    const finished = await sdk.waitFor("turn_finished", { timeoutMs: 30_000, from, where: sameRuntime(runtime) });
    expect(finished.stop_reason).toBe("end_turn");
    const toolResult = model.requests.find((request) => request.toolResults.some((result) => result.text.includes(`echo: ${marker}`)));
    expect(toolResult, "the model saw the tool result").toBeDefined();
  }

  it("runs a turn with one external tool call", async () => {
    const sdk = await attachSdk();
    let started = Date.now();
    const runtime = await startRuntime(sdk, `${mode}-basic`);
    durations["runtime_start (create agent + conversation)"] = Date.now() - started;
    started = Date.now();
    const inputId = sendInput(sdk, runtime, `${mode}-basic`, "m-basic");
    await sdk.waitFor("input_accepted", { timeoutMs: 10_000, where: (frame) => frame.request_id === inputId });
    const request = await sdk.waitFor("external_tool_call_request", { timeoutMs: 30_000 });
    expect(request).toMatchObject({ tool_name: TOOL_NAME, input: { text: "m-basic" }, runtime });
    expect(typeof request.seq).toBe("number");
    answer(sdk, request);
    await expectTurnFinished(sdk, runtime, "m-basic");
    durations["turn with one tool call"] = Date.now() - started;
    expect(sdk.logs.stream.ofType("stream_delta").length).toBeGreaterThan(0);
    expect(sdk.logs.control.ofType("stream_delta")).toHaveLength(0);
    expect(relay.environment(connectionId)?.outstandingCalls).toEqual([]);
  });

  it("a tool call pending across a relay-forced listener reconnect still finishes the turn", async () => {
    const sdk = await attachSdk();
    const runtime = await startRuntime(sdk, `${mode}-listener-reconnect`);
    sendInput(sdk, runtime, `${mode}-listener-reconnect`, "m-reconnect");
    const request = await sdk.waitFor("external_tool_call_request", { timeoutMs: 30_000 });
    const started = Date.now();
    const ready = new Promise<void>((resolve) => relay.once("listener-ready", () => resolve()));
    expect(relay.closeListener(connectionId, 1012, "test: forced reconnect")).toBe(true);
    await withDeadline(ready, 20_000, "listener reconnect");
    durations["listener reconnect after relay close"] = Date.now() - started;
    expect(relay.environment(connectionId)?.outstandingCalls).toEqual([request.request_id]);
    const finishedFrom = sdk.logs.control.frames.length;
    answer(sdk, request);
    await expectTurnFinished(sdk, runtime, "m-reconnect", finishedFrom);
    durations["answer after listener reconnect → turn_finished"] = Date.now() - started;
  });

  it("an answer sent while the listener is away is queued and finishes the turn once it is back", async () => {
    const sdk = await attachSdk();
    const runtime = await startRuntime(sdk, `${mode}-queued`);
    sendInput(sdk, runtime, `${mode}-queued`, "m-queued");
    const request = await sdk.waitFor("external_tool_call_request", { timeoutMs: 30_000 });
    const started = Date.now();
    const down = new Promise<void>((resolve) => relay.once("listener-down", () => resolve()));
    const answered = new Promise<string>((resolve) => relay.once("tool-call-answered", (event) => resolve(event.delivery)));
    relay.closeListener(connectionId, 1012, "test: forced reconnect");
    await withDeadline(down, 10_000, "listener down");
    answer(sdk, request);
    expect(await withDeadline(answered, 5_000, "answer routed")).toBe("queued");
    await expectTurnFinished(sdk, runtime, "m-queued");
    durations["answer queued during listener reconnect → turn_finished"] = Date.now() - started;
  });

  it("a tool call crosses an SDK reconnect: the request reaches the resumed session", async () => {
    const sessionId = `it-${mode}-sdk-reconnect`;
    const first = await attachSdk(sessionId);
    const runtime = await startRuntime(first, `${mode}-sdk-reconnect`);
    toolCallDelayMs = 800;
    try {
      const inputId = sendInput(first, runtime, `${mode}-sdk-reconnect`, "m-sdk");
      await first.waitFor("input_accepted", { timeoutMs: 10_000, where: (frame) => frame.request_id === inputId });
      const started = Date.now();
      first.terminate(); // the SDK's link drops before the model asks for the tool
      const requested = await withDeadline(
        new Promise<{ delivered: boolean }>((resolve) => relay.once("tool-call-requested", resolve)),
        30_000,
        "tool call requested",
      );
      expect(requested.delivered).toBe(true); // held for the detached session
      const second = await attachSdk(sessionId);
      const request = await second.waitFor("external_tool_call_request", { timeoutMs: 10_000 });
      expect(request.input).toEqual({ text: "m-sdk" });
      answer(second, request);
      await expectTurnFinished(second, runtime, "m-sdk");
      durations["SDK drop + resume → turn_finished"] = Date.now() - started;
    } finally {
      toolCallDelayMs = 0;
    }
  });

  it("another tenant can neither open the environment's status sockets nor re-register its device; the listener goes on undisturbed", async () => {
    const environment = relay.environment(connectionId)!;
    await expect(
      RawStatusClient.connect({ url: relay.url, connectionId, apiKey: OTHER_TENANT_KEY, sessionId: `intruder-${mode}` }),
    ).rejects.toMatchObject({ status: 404 });
    const { status } = await registerListener(relay.httpUrl, OTHER_TENANT_KEY, {
      deviceId: environment.deviceId,
      listenerInstanceId: environment.listenerInstanceId,
      connectionName: "stolen",
      metadata: {},
    });
    expect(status).toBe(409);
    const listed = await httpJson(`${relay.httpUrl}/v1/environments`, { headers: { authorization: `Bearer ${OTHER_TENANT_KEY}` } });
    expect(listed.text).not.toContain(connectionId);
    expect(relay.environment(connectionId)).toMatchObject({ listenerConnected: true, connectedAt: environment.connectedAt });
    const sdk = await attachSdk();
    const runtime = await startRuntime(sdk, `${mode}-after-intruder`);
    sendInput(sdk, runtime, `${mode}-after-intruder`, "m-intruder");
    answer(sdk, await sdk.waitFor("external_tool_call_request", { timeoutMs: 30_000 }));
    await expectTurnFinished(sdk, runtime, "m-intruder");
  });

  it("a 1008 close makes the listener register again with a new connection id", async () => {
    const oldId = connectionId;
    const started = Date.now();
    const registered = new Promise<string>((resolve) => relay.once("environment-registered", (info) => resolve(info.connectionId)));
    relay.closeListener(oldId, 1008, "Environment gone");
    const newId = await withDeadline(registered, 20_000, "re-registration");
    expect(newId).not.toBe(oldId);
    await until(() => relay.environment(newId)?.listenerConnected, "listener connected on the new environment", 20_000, 20);
    durations["1008 → registered again and connected"] = Date.now() - started;
    expect(relay.environment(oldId)).toBeUndefined();
    connectionId = newId;
    const sdk = await attachSdk();
    const runtime = await startRuntime(sdk, `${mode}-after-1008`);
    sendInput(sdk, runtime, `${mode}-after-1008`, "m-1008");
    answer(sdk, await sdk.waitFor("external_tool_call_request", { timeoutMs: 30_000 }));
    await expectTurnFinished(sdk, runtime, "m-1008");
  });
});
