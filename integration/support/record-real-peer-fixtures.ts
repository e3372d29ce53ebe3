/**
 * Records literal wire fixtures from the real Letta Code app-server (0.32.18).
 *
 *   npx tsx integration/support/record-real-peer-fixtures.ts [outputDir]
 *
 * Default output: test/fixtures/real-peer/. Writes, for each distinct frame kind (first
 * occurrence), `<direction>-<type>[-<message_type>].json` (direction `inbound` = runtime → client,
 * `outbound` = client → runtime; one file per `stream_delta` message_type), plus whole transcripts:
 *   - transcript-tool-turn.json      mode "unrestricted": one external tool call, answered
 *   - transcript-approval-turn.json  mode "standard": can_use_tool, sync, tools update, approve, tool call
 *   - transcript-abort-turn.json     mode "standard": can_use_tool, then abort_message
 *   - transcript-two-tool-calls.json mode "unrestricted": two tool calls in one model reply, the
 *                                    first answered with `error`, the second with `is_error: true`
 *   - model-requests.json            what the scripted model was asked (roles, tool names, tool results)
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startLettaAppServer } from "../../test/support/letta-peer-process.js";
import { replaceMachinePaths } from "./recording-placeholders.js";
import { connectRawPeerClient, type RawPeerClient, type RecordedFrame } from "../../test/support/raw-peer-client.js";
import { startScriptedModelServer, type ModelRequest } from "../../test/support/scripted-model-server.js";

const defaultOutput = fileURLToPath(new URL("../../test/fixtures/real-peer/", import.meta.url));
const outputDir = resolve(process.argv[2] ?? defaultOutput);

const GET_WEATHER = {
  name: "get_weather",
  description: "Get the current weather for a city.",
  parameters: {
    type: "object",
    properties: {
      city: { type: "string", description: "City name, e.g. Paris" },
    },
    required: ["city"],
    additionalProperties: false,
  },
};

const TURN_TIMEOUT_MS = 20_000;
let requestCounter = 0;
const nextId = (prefix: string) => `${prefix}-fixture-${++requestCounter}`;

function isTurnEnd(frame: Record<string, unknown>): boolean {
  return frame.type === "turn_finished";
}

async function settle(milliseconds: number): Promise<void> {
  await new Promise((done) => setTimeout(done, milliseconds));
}

async function startRuntime(client: RawPeerClient, mode: string, modelHandle: string, name: string) {
  const response = await client.request(
    {
      type: "runtime_start",
      request_id: nextId("runtime-start"),
      create_agent: { body: { name, model: modelHandle } },
      create_conversation: {},
      mode,
      external_tools: [{ tools: [GET_WEATHER] }],
    },
    { timeoutMs: TURN_TIMEOUT_MS, responseType: "runtime_start_response" },
  );
  if (response.success !== true) throw new Error(`runtime_start failed: ${JSON.stringify(response)}`);
  return response.runtime as { agent_id: string; conversation_id: string };
}

function sendUserMessage(client: RawPeerClient, runtime: unknown, text: string) {
  return client.request(
    {
      type: "input",
      request_id: nextId("input"),
      runtime,
      payload: {
        kind: "create_message",
        messages: [{ role: "user", content: text, client_message_id: nextId("cm") }],
      },
    },
    { timeoutMs: TURN_TIMEOUT_MS, responseType: "input_accepted" },
  );
}

async function main(): Promise<void> {
  const timings: Record<string, number> = {};
  const model = await startScriptedModelServer();
  model.setScript((request) => {
    if (request.lastMessage?.role === "tool") {
      return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
    }
    const cities = ["Paris", "Oslo", "Lima"].filter((city) => request.lastUserText.includes(city));
    if (request.toolNames.includes("get_weather") && cities.length > 0) {
      return {
        text: "Let me check the weather.",
        toolCalls: cities.map((city) => ({ name: "get_weather", arguments: { city } })),
      };
    }
    return { text: "pong" };
  });

  let started = Date.now();
  const peer = await startLettaAppServer({ modelUrl: model.url });
  timings.serverStartMs = Date.now() - started;
  const transcripts: Record<string, RecordedFrame[]> = {};
  try {
    // Run 1: unrestricted, one external tool call answered.
    {
      const client = await connectRawPeerClient(peer.url);
      try {
        await client.request({ type: "app_server_info", request_id: nextId("info") }, { responseType: "app_server_info_response" });
        started = Date.now();
        const runtime = await startRuntime(client, "unrestricted", model.modelHandle, "fixture-tool-turn");
        timings.runtimeStartMs = Date.now() - started;
        started = Date.now();
        const mark = client.received.length;
        await sendUserMessage(client, runtime, "What is the weather in Paris?");
        const call = await client.waitFor((frame) => frame.type === "external_tool_call_request", {
          timeoutMs: TURN_TIMEOUT_MS,
          fromIndex: mark,
          description: "external_tool_call_request",
        });
        client.send({
          type: "external_tool_call_response",
          request_id: call.request_id,
          result: { content: [{ type: "text", text: "Sunny, 21 °C" }] },
        });
        await client.waitFor(isTurnEnd, { timeoutMs: TURN_TIMEOUT_MS, fromIndex: mark, description: "turn_finished" });
        timings.toolTurnMs = Date.now() - started;
        await settle(500);
      } finally {
        await client.close();
        transcripts["tool-turn"] = client.transcript;
      }
    }

    // Run 2: standard mode → can_use_tool; sync, tools update, approve, answer the tool call.
    let runtime2: { agent_id: string; conversation_id: string };
    {
      const client = await connectRawPeerClient(peer.url);
      try {
        runtime2 = await startRuntime(client, "standard", model.modelHandle, "fixture-approval-turn");
        const mark = client.received.length;
        await sendUserMessage(client, runtime2, "What is the weather in Paris? (standard mode)");
        const control = await client.waitFor((frame) => frame.type === "control_request", {
          timeoutMs: TURN_TIMEOUT_MS,
          fromIndex: mark,
          description: "control_request",
        });
        await client.request({ type: "sync", request_id: nextId("sync"), runtime: runtime2 }, { responseType: "sync_response" });
        await client.request(
          {
            type: "runtime_external_tools_update",
            request_id: nextId("tools-update"),
            updates: [{ runtimes: [runtime2], external_tools: [{ tools: [GET_WEATHER] }] }],
          },
          { responseType: "runtime_external_tools_update_response" },
        );
        await client.request(
          {
            type: "input",
            request_id: nextId("approval"),
            runtime: runtime2,
            payload: { kind: "approval_response", request_id: control.request_id, decision: { behavior: "allow" } },
          },
          { responseType: "input_accepted" },
        );
        const call = await client.waitFor((frame) => frame.type === "external_tool_call_request", {
          timeoutMs: TURN_TIMEOUT_MS,
          fromIndex: mark,
          description: "external_tool_call_request",
        });
        client.send({
          type: "external_tool_call_response",
          request_id: call.request_id,
          result: { content: [{ type: "text", text: "Rain, 12 °C" }] },
        });
        await client.waitFor(isTurnEnd, { timeoutMs: TURN_TIMEOUT_MS, fromIndex: mark, description: "turn_finished" });
        await settle(500);
      } finally {
        await client.close();
        transcripts["approval-turn"] = client.transcript;
      }
    }

    // Run 3: standard mode → can_use_tool, then abort_message while the approval is pending.
    {
      const client = await connectRawPeerClient(peer.url);
      try {
        const runtime = await startRuntime(client, "standard", model.modelHandle, "fixture-abort-turn");
        const mark = client.received.length;
        await sendUserMessage(client, runtime, "What is the weather in Oslo? (will be aborted)");
        await client.waitFor((frame) => frame.type === "control_request", {
          timeoutMs: TURN_TIMEOUT_MS,
          fromIndex: mark,
          description: "control_request",
        });
        await client.request({ type: "abort_message", request_id: nextId("abort"), runtime }, { responseType: "abort_message_response" });
        await client
          .waitFor(isTurnEnd, { timeoutMs: 5_000, fromIndex: mark, description: "turn_finished after abort" })
          .catch((error: Error) => console.error(`note: ${error.message}`));
        await settle(500);
      } finally {
        await client.close();
        transcripts["abort-turn"] = client.transcript;
      }
    }

    // Run 4: unrestricted, two tool calls in one reply; answer one with `error`, one with `is_error`.
    {
      const client = await connectRawPeerClient(peer.url);
      try {
        const runtime = await startRuntime(client, "unrestricted", model.modelHandle, "fixture-two-tool-calls");
        const mark = client.received.length;
        await sendUserMessage(client, runtime, "Weather in Oslo and Lima?");
        const first = await client.waitFor((frame) => frame.type === "external_tool_call_request", {
          timeoutMs: TURN_TIMEOUT_MS,
          fromIndex: mark,
          description: "first external_tool_call_request",
        });
        await settle(300); // show that the second request does not come before the first is answered
        const requestsBeforeAnswer = client.received.slice(mark).filter((frame) => frame.type === "external_tool_call_request").length;
        client.send({ type: "external_tool_call_response", request_id: first.request_id, error: "weather service down" });
        const second = await client.waitFor(
          (frame) => frame.type === "external_tool_call_request" && frame.request_id !== first.request_id,
          { timeoutMs: TURN_TIMEOUT_MS, fromIndex: mark, description: "second external_tool_call_request" },
        );
        client.send({
          type: "external_tool_call_response",
          request_id: second.request_id,
          result: { content: [{ type: "text", text: "unknown city" }], is_error: true },
        });
        await client.waitFor(isTurnEnd, { timeoutMs: TURN_TIMEOUT_MS, fromIndex: mark, description: "turn_finished" });
        console.log(`two tool calls: ${requestsBeforeAnswer} external_tool_call_request(s) before the first answer`);
        await settle(500);
      } finally {
        await client.close();
        transcripts["two-tool-calls"] = client.transcript;
      }
    }
  } finally {
    await peer.stop();
    await model.close();
  }

  writeFixtures(transcripts, model.requests, peer.home);
  console.log(`fixtures written to ${outputDir}`);
  console.log(`timings: ${JSON.stringify(timings)}`);
}

function fixtureName(record: RecordedFrame): string {
  const type = String(record.frame.type ?? "unparsed");
  let name = `${record.direction}-${type}`;
  if (type === "stream_delta") {
    const delta = record.frame.delta as { message_type?: unknown } | undefined;
    name += `-${String(delta?.message_type ?? "unknown")}`;
  }
  if (type === "input") {
    const payload = record.frame.payload as { kind?: unknown } | undefined;
    name += `-${String(payload?.kind ?? "unknown")}`;
  }
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}

function summarizeModelRequest(request: ModelRequest) {
  return {
    index: request.index,
    model: request.model,
    stream: request.stream,
    toolNames: request.toolNames,
    offeredGetWeather: request.tools.find((tool) => tool.function.name === "get_weather") ?? null,
    messages: request.messages.map((message) => ({
      role: message.role,
      ...(message.role === "system" ? { contentChars: JSON.stringify(message.content ?? "").length } : { content: message.content }),
      ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}),
      ...(message.tool_call_id ? { tool_call_id: message.tool_call_id } : {}),
    })),
    otherBodyKeys: Object.keys(request.body).filter((key) => !["messages", "tools"].includes(key)),
    bodyWithoutMessagesAndTools: Object.fromEntries(Object.entries(request.body).filter(([key]) => !["messages", "tools"].includes(key))),
  };
}

function writeFixtures(transcripts: Record<string, RecordedFrame[]>, modelRequests: ModelRequest[], home: string): void {
  mkdirSync(outputDir, { recursive: true });
  for (const file of readdirSync(outputDir)) {
    if (/^(inbound-|outbound-|transcript-|model-requests).*\.json$/.test(file)) rmSync(join(outputDir, file));
  }
  const pretty = (value: unknown) => `${replaceMachinePaths(JSON.stringify(value, null, 2), home)}\n`;
  const seen = new Set<string>();
  for (const transcript of Object.values(transcripts)) {
    for (const record of transcript) {
      const name = fixtureName(record);
      if (seen.has(name)) continue;
      seen.add(name);
      writeFileSync(join(outputDir, `${name}.json`), pretty(record.frame));
    }
  }
  for (const [label, transcript] of Object.entries(transcripts)) {
    writeFileSync(join(outputDir, `transcript-${label}.json`), pretty(transcript));
  }
  writeFileSync(join(outputDir, "model-requests.json"), pretty(modelRequests.map(summarizeModelRequest)));
  console.log(`${seen.size} frame fixtures: ${[...seen].sort().join(", ")}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
