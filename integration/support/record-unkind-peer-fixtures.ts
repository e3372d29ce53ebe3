/**
 * Records what the real Letta Code app-server (0.32.18) does where a kind test double would not,
 * as literal transcripts under test/fixtures/real-peer/unkind/:
 *
 *   npx tsx integration/support/record-unkind-peer-fixtures.ts [outputDir]
 *
 * - `bash-snapshots.json`        a runtime tool (Bash) streams growing snapshots of one result
 * - `subagent-during-turn.json`  the model calls the built-in `Agent` tool; the subagent's deltas
 *                                arrive on the parent's runtime scope with `subagent_id`, during the
 *                                parent's turn; then a `<task-notification>` turn the client never sent
 * - `repeated-input.json`        the same `input` (same request_id and client_message_id) written again
 *                                after the first run ended: a second run starts
 * - `repeated-input-while-running.json` the same `input` written again while its run is going
 * - `approval-replay.json`       client A's pending `can_use_tool` is replayed to client B's fresh
 *                                connection before B sends anything
 * - `request-after-reconnect.json` a pending `external_tool_call_request` is never re-sent to the
 *                                client that connects after its owner's socket closed
 * - `reused-tool-call-id.json`   the model uses `call_0` in two turns
 * - `summary.json`               what each transcript shows, counted (the tests read these counts)
 *
 * Each transcript is `[{ client, direction, at, frame }]` (all clients of a scenario, one timeline,
 * one entry per line), the recording machine's folders replaced by placeholders. The reused-id scenario
 * stops the model after 8 requests: the runtime itself loops on a reused id (it drops the second
 * result from the history and asks the model again and again).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startLettaAppServer, type LettaAppServer } from "../../test/support/letta-peer-process.js";
import { replaceMachinePaths } from "./recording-placeholders.js";
import { connectRawPeerClient, type RawPeerClient } from "../../test/support/raw-peer-client.js";
import {
  startScriptedModelServer,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from "../../test/support/scripted-model-server.js";

const defaultOutput = fileURLToPath(new URL("../../test/fixtures/real-peer/unkind/", import.meta.url));
const outputDir = resolve(process.argv[2] ?? defaultOutput);
const WAIT_MS = 30_000;

const GET_WEATHER = {
  name: "get_weather",
  description: "Get the current weather for a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
};

type Frame = Record<string, unknown>;
interface Entry {
  client: string;
  direction: "inbound" | "outbound";
  at: number;
  frame: Frame;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
let counter = 0;
const nextId = (prefix: string) => `${prefix}-unkind-${++counter}`;

/** Several raw clients of one scenario, merged into one timeline at the end. */
class Scenario {
  readonly clients = new Map<string, RawPeerClient>();
  readonly started = Date.now();
  readonly offsets = new Map<string, number>();

  async connect(name: string, url: string): Promise<RawPeerClient> {
    const client = await connectRawPeerClient(url);
    this.clients.set(name, client);
    this.offsets.set(name, Date.now() - this.started);
    return client;
  }

  timeline(): Entry[] {
    const entries: Entry[] = [];
    for (const [name, client] of this.clients) {
      const offset = this.offsets.get(name) ?? 0;
      for (const record of client.transcript)
        entries.push({ client: name, direction: record.direction, at: record.at + offset, frame: record.frame });
    }
    return entries.sort((left, right) => left.at - right.at);
  }

  async close(): Promise<void> {
    for (const client of this.clients.values()) await client.close();
  }
}

async function startRuntime(client: RawPeerClient, model: ScriptedModelServer, mode: string, name: string, tools = true) {
  const response = await client.request(
    {
      type: "runtime_start",
      request_id: nextId("runtime-start"),
      create_agent: { body: { name, model: model.modelHandle } },
      create_conversation: {},
      mode,
      ...(tools ? { external_tools: [{ tools: [GET_WEATHER] }] } : {}),
    },
    { timeoutMs: WAIT_MS, responseType: "runtime_start_response" },
  );
  if (response.success !== true) throw new Error(`runtime_start failed: ${JSON.stringify(response)}`);
  return response.runtime as { agent_id: string; conversation_id: string };
}

function inputFrame(
  runtime: unknown,
  text: string,
  requestId = nextId("input"),
  clientMessageId = nextId("cm"),
): Frame & { request_id: string } {
  return {
    type: "input",
    request_id: requestId,
    runtime,
    payload: { kind: "create_message", messages: [{ role: "user", content: text, client_message_id: clientMessageId }] },
  };
}

const isType = (type: string) => (frame: Frame) => frame.type === type;
const inbound = (entries: Entry[]) => entries.filter((entry) => entry.direction === "inbound").map((entry) => entry.frame);

/** The role of the last message of each model request of the REUSE scenario. */
const reuseLastRoles: string[] = [];

/** Plays the model for every scenario, by markers in the user's text. */
function modelScript(request: ModelRequest): ScriptedReply {
  const user = request.lastUserText;
  if (user.includes("REUSE")) reuseLastRoles.push(`${user.slice(0, 12)}: ${request.lastMessage?.role ?? "none"}`);
  const afterTool = request.lastMessage?.role === "tool";
  if (user.includes("SUBAGENT-TASK")) {
    if (afterTool) return { text: `subagent finished: ${request.toolResults.map((result) => result.text).join(" ")}` };
    return {
      text: "subagent text before its tool",
      toolCalls: [{ name: "Bash", arguments: { command: "echo from-subagent", description: "echo" } }],
    };
  }
  if (user.includes("<task-notification>")) return { text: "parent saw the notification" };
  if (user.includes("DELEGATE")) {
    // Hold the parent's answer after the Agent tool returned, so the subagent streams during the parent's turn.
    if (afterTool) return { text: "parent done", delayMs: 4_000 };
    return {
      text: "delegating",
      toolCalls: [
        { name: "Agent", arguments: { subagent_type: "general-purpose", description: "say hi", prompt: "SUBAGENT-TASK: say hi" } },
      ],
    };
  }
  if (user.includes("BASH")) {
    if (afterTool) return { text: "bash done" };
    return {
      text: "running",
      toolCalls: [{ name: "Bash", arguments: { command: "for i in 1 2 3 4; do echo line$i; sleep 0.4; done", description: "count" } }],
    };
  }
  if (user.includes("REUSE")) {
    if (reuseLastRoles.length > 8) return { text: "loop guard: stopping" };
    if (afterTool) return { text: `reuse done: ${request.toolResults.map((result) => result.text).join(" ")}` };
    return { toolCalls: [{ id: "call_0", name: "get_weather", arguments: { city: "Paris" } }] };
  }
  if (user.includes("WEATHER")) {
    if (afterTool) return { text: `weather done: ${request.toolResults.map((result) => result.text).join(" ")}` };
    return { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] };
  }
  if (user.includes("SLOW")) return { text: "slow answer", delayMs: 1_500 };
  return { text: "pong" };
}

async function bashSnapshots(peer: LettaAppServer, model: ScriptedModelServer, scenario: Scenario) {
  const client = await scenario.connect("A", peer.url);
  const runtime = await startRuntime(client, model, "unrestricted", "unkind-bash");
  const mark = client.received.length;
  client.send(inputFrame(runtime, "BASH please"));
  await client.waitFor(isType("turn_finished"), { timeoutMs: WAIT_MS, fromIndex: mark });
  await sleep(300);
}

async function subagentDuringTurn(peer: LettaAppServer, model: ScriptedModelServer, scenario: Scenario) {
  const client = await scenario.connect("A", peer.url);
  const runtime = await startRuntime(client, model, "unrestricted", "unkind-subagent");
  const mark = client.received.length;
  client.send(inputFrame(runtime, "DELEGATE please"));
  await client.waitFor(isType("turn_finished"), { timeoutMs: WAIT_MS, fromIndex: mark });
  const first = client.received.length;
  // The subagent's completion comes back as a <task-notification> turn nobody sent.
  await client.waitFor(isType("turn_finished"), { timeoutMs: WAIT_MS, fromIndex: first }).catch(() => undefined);
  await sleep(500);
}

async function repeatedInput(peer: LettaAppServer, model: ScriptedModelServer, scenario: Scenario) {
  const client = await scenario.connect("A", peer.url);
  const runtime = await startRuntime(client, model, "unrestricted", "unkind-repeat");
  const frame = inputFrame(runtime, "SLOW hello");
  const mark = client.received.length;
  client.send(frame);
  await client.waitFor(isType("turn_finished"), { timeoutMs: WAIT_MS, fromIndex: mark });
  await sleep(500);
  // The same frame again, as an SDK re-sending an input "the runtime dedups" would.
  const again = client.received.length;
  client.send(frame);
  await client.waitFor(isType("turn_finished"), { timeoutMs: WAIT_MS, fromIndex: again }).catch(() => undefined);
  await sleep(300);
}

async function repeatedInputWhileRunning(peer: LettaAppServer, model: ScriptedModelServer, scenario: Scenario) {
  const client = await scenario.connect("A", peer.url);
  const runtime = await startRuntime(client, model, "unrestricted", "unkind-repeat-running");
  const frame = inputFrame(runtime, "SLOW hello");
  const mark = client.received.length;
  client.send(frame);
  await client.waitFor(isType("input_accepted"), { timeoutMs: WAIT_MS, fromIndex: mark });
  client.send(frame); // while its run is still going
  await client.waitFor(isType("turn_finished"), { timeoutMs: WAIT_MS, fromIndex: mark });
  await sleep(3_000);
}

async function approvalReplay(peer: LettaAppServer, model: ScriptedModelServer, scenario: Scenario) {
  const owner = await scenario.connect("A", peer.url);
  const runtime = await startRuntime(owner, model, "standard", "unkind-approval-owner");
  const mark = owner.received.length;
  owner.send(inputFrame(runtime, "WEATHER please"));
  const control = await owner.waitFor(isType("control_request"), { timeoutMs: WAIT_MS, fromIndex: mark });
  // A second client connects and says nothing: A's pending approval is replayed to it.
  const other = await scenario.connect("B", peer.url);
  await other.waitFor(isType("control_request"), { timeoutMs: 5_000 }).catch(() => undefined);
  await sleep(300);
  // B opens its own runtime; then A answers its own approval and the turn goes on.
  await startRuntime(other, model, "standard", "unkind-approval-other", false);
  owner.send({
    type: "input",
    request_id: nextId("approval"),
    runtime,
    payload: { kind: "approval_response", request_id: control.request_id, decision: { behavior: "allow" } },
  });
  const call = await owner.waitFor(isType("external_tool_call_request"), { timeoutMs: WAIT_MS, fromIndex: mark });
  owner.send({ type: "external_tool_call_response", request_id: call.request_id, result: { content: [{ type: "text", text: "Snow" }] } });
  await owner.waitFor(isType("turn_finished"), { timeoutMs: WAIT_MS, fromIndex: mark });
  await sleep(300);
}

async function requestAfterReconnect(peer: LettaAppServer, model: ScriptedModelServer, scenario: Scenario) {
  const first = await scenario.connect("A", peer.url);
  const runtime = await startRuntime(first, model, "unrestricted", "unkind-reconnect");
  const mark = first.received.length;
  first.send(inputFrame(runtime, "WEATHER please"));
  await first.waitFor(isType("external_tool_call_request"), { timeoutMs: WAIT_MS, fromIndex: mark });
  await first.close();
  // The same controller comes back on a new socket and registers the same runtime and tool.
  const second = await scenario.connect("A2", peer.url);
  await second.request(
    {
      type: "runtime_start",
      request_id: nextId("runtime-start"),
      agent_id: runtime.agent_id,
      conversation_id: runtime.conversation_id,
      mode: "unrestricted",
      external_tools: [{ tools: [GET_WEATHER] }],
    },
    { timeoutMs: WAIT_MS, responseType: "runtime_start_response" },
  );
  await second.request({ type: "sync", request_id: nextId("sync"), runtime }, { timeoutMs: WAIT_MS, responseType: "sync_response" });
  await sleep(3_000);
}

async function reusedToolCallId(peer: LettaAppServer, model: ScriptedModelServer, scenario: Scenario) {
  const client = await scenario.connect("A", peer.url);
  const runtime = await startRuntime(client, model, "unrestricted", "unkind-reuse");
  for (const turn of [1, 2]) {
    const mark = client.received.length;
    client.send(inputFrame(runtime, `REUSE turn ${turn}`));
    const answered = new Set<unknown>();
    const deadline = Date.now() + 8_000;
    while (Date.now() < deadline && !client.received.slice(mark).some(isType("turn_finished"))) {
      const next = await client
        .waitFor(
          (frame) => (frame.type === "external_tool_call_request" && !answered.has(frame.request_id)) || frame.type === "turn_finished",
          {
            timeoutMs: Math.max(1, deadline - Date.now()),
            fromIndex: mark,
          },
        )
        .catch(() => undefined);
      if (!next || next.type === "turn_finished") break;
      answered.add(next.request_id);
      client.send({
        type: "external_tool_call_response",
        request_id: next.request_id,
        result: { content: [{ type: "text", text: `Sunny (turn ${turn})` }] },
      });
    }
    if (!client.received.slice(mark).some(isType("turn_finished"))) {
      // The runtime is stuck in its own loop: stop the turn so the next scenario starts clean.
      await client
        .request(
          { type: "abort_message", request_id: nextId("abort"), runtime },
          { timeoutMs: WAIT_MS, responseType: "abort_message_response" },
        )
        .catch(() => undefined);
      await client.waitFor(isType("turn_finished"), { timeoutMs: 5_000, fromIndex: mark }).catch(() => undefined);
    }
    await sleep(300);
  }
}

function summarize(name: string, entries: Entry[], modelRequests: number): Record<string, unknown> {
  const frames = inbound(entries);
  const deltas = frames.filter(isType("stream_delta")) as Array<{ delta: Frame; subagent_id?: string }>;
  const ofType = (type: string) => frames.filter(isType(type));
  const base = { modelRequests, turnFinished: ofType("turn_finished").length };
  switch (name) {
    case "bash-snapshots": {
      const returns = deltas.filter((frame) => frame.delta.message_type === "tool_return_message");
      return {
        ...base,
        toolReturnMessages: returns.length,
        snapshotIds: returns.map((frame) => frame.delta.id),
        texts: returns.map((frame) => frame.delta.tool_return),
      };
    }
    case "subagent-during-turn": {
      const firstFinished = entries.findIndex((entry) => entry.direction === "inbound" && entry.frame.type === "turn_finished");
      const subagentDeltas = deltas.filter((frame) => typeof frame.subagent_id === "string");
      const duringParentTurn = entries
        .slice(0, firstFinished)
        .filter((entry) => entry.frame.type === "stream_delta" && typeof entry.frame.subagent_id === "string").length;
      return {
        ...base,
        subagentDeltas: subagentDeltas.length,
        subagentDeltasDuringParentTurn: duringParentTurn,
        subagentMessageTypes: [...new Set(subagentDeltas.map((frame) => frame.delta.message_type))],
        subagentStopReasons: subagentDeltas
          .filter((frame) => frame.delta.message_type === "stop_reason")
          .map((frame) => frame.delta.stop_reason),
        subagentOnParentScope: subagentDeltas.every((frame) => (frame as Frame).runtime !== undefined),
      };
    }
    case "repeated-input":
    case "repeated-input-while-running":
      return {
        ...base,
        inputAccepted: ofType("input_accepted").map((frame) => ({
          request_id: frame.request_id,
          accepted: frame.accepted,
          disposition: frame.disposition,
        })),
      };
    case "approval-replay": {
      const toB = entries.filter((entry) => entry.client === "B" && entry.direction === "inbound");
      const beforeBSpoke = toB.filter(
        (entry) =>
          entry.at < (entries.find((other) => other.client === "B" && other.direction === "outbound")?.at ?? Number.POSITIVE_INFINITY),
      );
      return {
        ...base,
        controlRequestsToB: toB.filter((entry) => entry.frame.type === "control_request").length,
        controlRequestsToBBeforeItSentAnything: beforeBSpoke.filter((entry) => entry.frame.type === "control_request").length,
        framesToBBeforeItSentAnything: beforeBSpoke.map((entry) => entry.frame.type),
      };
    }
    case "request-after-reconnect":
      return {
        ...base,
        requestsToFirstSocket: entries.filter((entry) => entry.client === "A" && entry.frame.type === "external_tool_call_request").length,
        requestsToSecondSocket: entries.filter((entry) => entry.client === "A2" && entry.frame.type === "external_tool_call_request")
          .length,
      };
    case "reused-tool-call-id":
      return {
        ...base,
        modelRequestLastRoles: reuseLastRoles,
        externalRequests: ofType("external_tool_call_request").map((frame) => ({
          request_id: frame.request_id,
          tool_call_id: frame.tool_call_id,
        })),
      };
    default:
      return base;
  }
}

async function main(): Promise<void> {
  mkdirSync(outputDir, { recursive: true });
  const model = await startScriptedModelServer({ script: modelScript });
  const peer = await startLettaAppServer({ modelUrl: model.url });
  const summary: Record<string, unknown> = {
    recordedWith: "@letta-ai/letta-code 0.32.18, letta server --listen, local backend, scripted model",
  };
  const scenarios: Array<[string, (peer: LettaAppServer, model: ScriptedModelServer, scenario: Scenario) => Promise<void>]> = [
    ["bash-snapshots", bashSnapshots],
    ["subagent-during-turn", subagentDuringTurn],
    ["repeated-input", repeatedInput],
    ["repeated-input-while-running", repeatedInputWhileRunning],
    ["request-after-reconnect", requestAfterReconnect],
    ["reused-tool-call-id", reusedToolCallId],
    ["approval-replay", approvalReplay],
  ];
  try {
    for (const [name, run] of scenarios) {
      const scenario = new Scenario();
      const requestsBefore = model.requests.length;
      try {
        await run(peer, model, scenario);
      } catch (error) {
        summary[`${name}:error`] = String(error);
        console.error(`${name}: ${String(error)}`);
      } finally {
        await scenario.close();
      }
      const entries = scenario.timeline();
      // One entry per line: literal frames, diffable, a fraction of the size of indented JSON.
      const pretty = replaceMachinePaths(`[\n${entries.map((entry) => JSON.stringify(entry)).join(",\n")}\n]\n`, peer.home);
      writeFileSync(join(outputDir, `${name}.json`), pretty);
      summary[name] = summarize(name, entries, model.requests.length - requestsBefore);
      console.log(`${name}: ${JSON.stringify(summary[name])}`);
    }
  } finally {
    await peer.stop();
    await model.close();
  }
  writeFileSync(join(outputDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`written to ${outputDir}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
