/**
 * The scripted runtime must send the same frame shapes as the real app-server:
 * every `inbound-*.json` fixture recorded from Letta Code 0.32.18
 * (test/fixtures/real-peer) is compared, field by field (names and JSON
 * types, envelope included), with the first frame of the same kind the
 * scripted runtime sends during an equivalent session.
 */
import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedRuntime, type ScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import { connectClient, inputFrame, startFrame, terminateClients, type Frame } from "./scripted-runtime-test-client.js";

const FIXTURES = new URL("../fixtures/real-peer/", import.meta.url);

/** Field names and JSON types, recursively; arrays by their first element (an empty array matches any array). */
function shape(value: unknown): unknown {
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "array" : [shape(value[0])];
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((key) => [key, shape((value as Frame)[key])]),
    );
  }
  return typeof value;
}

/** Make an empty array in either shape match the other side's array. */
function alignArrays(actual: unknown, expected: unknown): unknown {
  if (actual === "array" && Array.isArray(expected)) return expected;
  if (Array.isArray(actual) && expected === "array") return "array";
  if (actual && expected && typeof actual === "object" && typeof expected === "object" && !Array.isArray(actual)) {
    return Object.fromEntries(Object.entries(actual).map(([key, inner]) => [key, alignArrays(inner, (expected as Frame)[key])]));
  }
  if (Array.isArray(actual) && Array.isArray(expected)) return [alignArrays(actual[0], expected[0])];
  return actual;
}

/** P's naming: `inbound-<type>[-<message_type>]`. */
const kindOf = (frame: Frame): string =>
  frame.type === "stream_delta" ? `inbound-stream_delta-${frame.delta?.message_type}` : `inbound-${frame.type}`;

let runtime: ScriptedRuntime | undefined;

afterEach(async () => {
  terminateClients();
  await runtime?.close();
  runtime = undefined;
});

async function recordSession(): Promise<Map<string, Frame>> {
  runtime = await startScriptedRuntime({
    script: async (turn) => {
      await turn.say("Checking the weather.");
      const result = await turn.callTool("get_weather", { city: "Paris" });
      await turn.say(`done: ${result.toolReturn}`);
    },
  });
  const client = await connectClient(runtime.url);
  client.send({ type: "app_server_info", request_id: "info-1" });
  client.send(startFrame("rs-1", [{ name: "get_weather" }], { mode: "unrestricted" }));
  const { runtime: scope } = await client.waitFor((frame) => frame.request_id === "rs-1");
  client.send(inputFrame("in-1", scope, "weather?"));
  const request = await client.waitFor((frame) => frame.type === "external_tool_call_request");
  client.send({
    type: "external_tool_call_response",
    request_id: request.request_id,
    result: { content: [{ type: "text", text: "Sunny" }] },
  });
  await client.waitFor((frame) => frame.type === "turn_finished");
  client.send({ type: "runtime_external_tools_update", request_id: "up-1", updates: [{ runtimes: [scope], external_tools: [] }] });
  client.send({ type: "sync", request_id: "sync-1", runtime: scope });
  await client.waitFor((frame) => frame.type === "sync_response");
  client.send({
    type: "runtime_start",
    request_id: "rs-2",
    agent_id: scope.agent_id,
    conversation_id: "default",
    mode: "standard",
    external_tools: [{ tools: [{ name: "get_weather", description: "w", parameters: {} }] }],
  });
  const standard = (await client.waitFor((frame) => frame.request_id === "rs-2")).runtime;
  client.send(inputFrame("in-2", standard, "again"));
  await client.waitFor((frame) => frame.type === "control_request");
  client.send({ type: "abort_message", request_id: "ab-1", runtime: standard });
  await client.waitFor((frame) => frame.type === "turn_finished" && frame.stop_reason === "cancelled");
  const firstOfKind = new Map<string, Frame>();
  for (const frame of client.frames) if (!firstOfKind.has(kindOf(frame))) firstOfKind.set(kindOf(frame), frame);
  return firstOfKind;
}

describe("scripted runtime matches the recorded real-peer frames", () => {
  const fixtureNames = readdirSync(FIXTURES).filter((name) => name.startsWith("inbound-") && name.endsWith(".json"));

  it("has real-peer fixtures to compare with", () => {
    expect(fixtureNames.length).toBeGreaterThanOrEqual(20);
  });

  it("sends every recorded inbound frame kind with the same fields and types", async () => {
    const produced = await recordSession();
    const mismatches: string[] = [];
    for (const name of fixtureNames) {
      const kind = name.replace(/\.json$/, "");
      const expected = JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8")) as Frame;
      const actual = produced.get(kind);
      if (!actual) {
        mismatches.push(`${kind}: never sent`);
        continue;
      }
      if (kind === "inbound-update_device_status") {
        // A reduced device status: same fields, simpler values.
        expect(Object.keys(actual.device_status).sort(), kind).toEqual(Object.keys(expected.device_status).sort());
        expect(Object.keys(actual).sort(), kind).toEqual(Object.keys(expected).sort());
        continue;
      }
      if (kind === "inbound-runtime_start_response") {
        // The agent is a reduced AgentState: the same fields, except the real one's server-side extras.
        expect(Object.keys(actual.agent).sort(), kind).toEqual(Object.keys(expected.agent).sort());
      }
      const expectedShape = shape(expected);
      const actualShape = alignArrays(shape(actual), expectedShape);
      if (JSON.stringify(actualShape) !== JSON.stringify(expectedShape)) {
        mismatches.push(`${kind}:\n  expected ${JSON.stringify(expectedShape)}\n  actual   ${JSON.stringify(actualShape)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("emits a tool turn in the recorded order (snapshots coalesced, device/queue/subagent snapshots left out)", async () => {
    const transcript = JSON.parse(readFileSync(new URL("transcript-tool-turn.json", FIXTURES), "utf8")) as Array<{
      direction: string;
      frame: Frame;
    }>;
    const sequence = (frames: Frame[]): string[] => {
      const start = frames.findIndex((frame) => frame.type === "input_accepted");
      const kinds = frames
        .slice(start)
        .filter((frame) => !["update_device_status", "update_queue", "update_subagent_state"].includes(frame.type))
        .map((frame) => (frame.type === "update_loop_status" ? `loop:${frame.loop_status.status}` : kindOf(frame)));
      return kinds.filter((kind, index) => !kind.startsWith("loop:") || kind !== kinds[index - 1]);
    };
    const expected = sequence(transcript.filter((entry) => entry.direction === "inbound").map((entry) => entry.frame));
    expect(expected).toContain("inbound-external_tool_call_request");

    runtime = await startScriptedRuntime({
      script: async (turn) => {
        await turn.say("Checking the weather.");
        const result = await turn.callTool("get_weather", { city: "Paris" });
        await turn.say(`done: ${result.toolReturn}`);
      },
    });
    const client = await connectClient(runtime.url);
    client.send(startFrame("rs-1", [{ name: "get_weather" }]));
    const { runtime: scope } = await client.waitFor((frame) => frame.request_id === "rs-1");
    client.send(inputFrame("in-1", scope, "weather?"));
    const request = await client.waitFor((frame) => frame.type === "external_tool_call_request");
    client.send({
      type: "external_tool_call_response",
      request_id: request.request_id,
      result: { content: [{ type: "text", text: "Sunny" }] },
    });
    await client.waitFor((frame) => frame.type === "turn_finished");
    expect(sequence(client.frames)).toEqual(expected);
  });
});

describe("scripted runtime frames decode with the SDK's wire schemas", () => {
  it("sends nothing that decodeFrame reports as unknown or invalid", async () => {
    runtime = await startScriptedRuntime({
      permissionMode: "standard",
      script: async (turn) => {
        await turn.reason("thinking");
        await turn.say("checking");
        const result = await turn.callTool("get_weather", { city: "Paris" });
        // Not read-only: standard asks about it (a plain `ls` would run unasked, as in the real runtime).
        await turn.runBuiltinTool("Bash", { command: "npm test" }, "a\nb");
        const subagent = turn.subagent({ description: "look around" });
        await subagent.say("subagent here");
        await subagent.runTool("Read", { file_path: "x" }, "contents");
        await subagent.finish();
        if (turn.userText === "fail") turn.fail("scripted failure");
        await turn.say(result.toolReturn);
      },
    });
    const client = await connectClient(runtime.url);
    client.send({ type: "app_server_info", request_id: "info-1" });
    client.send(startFrame("rs-1", [{ name: "get_weather" }]));
    const { runtime: scope } = await client.waitFor((frame) => frame.request_id === "rs-1");
    const answerApproval = (requestId: string, decision: Frame): void =>
      client.send({
        type: "input",
        request_id: `ap-${requestId}`,
        runtime: scope,
        payload: { kind: "approval_response", request_id: requestId, decision },
      });
    const answered = new Set<string>();
    const nextApproval = async (): Promise<Frame> => {
      const control = await client.waitFor((frame) => frame.type === "control_request" && !answered.has(frame.request_id));
      answered.add(control.request_id);
      return control;
    };
    client.send(inputFrame("in-1", scope, "weather?"));
    answerApproval((await nextApproval()).request_id, { behavior: "allow" }); // get_weather
    const request = await client.waitFor((frame) => frame.type === "external_tool_call_request");
    client.send(inputFrame("in-2", scope, "fail"));
    client.send({
      type: "external_tool_call_response",
      request_id: request.request_id,
      result: { content: [{ type: "text", text: "sunny" }] },
    });
    answerApproval((await nextApproval()).request_id, { behavior: "allow" }); // Bash: runs, streams its output
    answerApproval((await nextApproval()).request_id, { behavior: "deny", message: "no" }); // get_weather of the second turn
    answerApproval((await nextApproval()).request_id, { behavior: "deny", message: "no" }); // its Bash
    await client.waitFor((frame) => frame.type === "turn_finished" && frame.stop_reason === "error");
    client.send({ type: "sync", request_id: "sync-1", runtime: scope });
    client.send({ type: "abort_message", request_id: "ab-1", runtime: scope });
    client.send({ type: "runtime_external_tools_update", request_id: "up-1", updates: [{ runtimes: [scope], external_tools: [] }] });
    await client.waitFor((frame) => frame.type === "runtime_external_tools_update_response");
    const { decodeFrame } = await import("../../packages/toolrelay/src/wire/index.js");
    const problems = client.frames
      .map((frame) => ({ frame, decoded: decodeFrame(JSON.stringify(frame)) }))
      .filter(({ decoded }) => decoded.kind !== "frame")
      .map(({ frame, decoded }) => `${kindOf(frame)}: ${JSON.stringify(decoded)}`);
    expect(problems).toEqual([]);
    const kinds = new Set(client.frames.map(kindOf));
    for (const kind of ["reasoning_message", "tool_call_message", "tool_return_message", "user_message", "error_message", "loop_error"]) {
      expect(kinds.has(`inbound-stream_delta-${kind}`), kind).toBe(true);
    }
  });
});
