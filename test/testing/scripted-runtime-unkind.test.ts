/**
 * The scripted runtime is as unkind as the real one, by default. Each behaviour is checked against
 * what the real Letta Code 0.32.18 app-server did in the same situation (transcripts in
 * test/fixtures/real-peer/unkind/, recorded by integration/support/record-unkind-peer-fixtures.ts):
 * the same frames, field names and JSON types, in the same order where order is the point.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
  startScriptedRuntime,
  type ScriptedRuntime,
  type StartScriptedRuntimeOptions,
} from "../../packages/toolrelay/src/testing/index.js";
import {
  connectClient,
  inputFrame,
  letTimePass,
  startFrame,
  terminateClients,
  type Frame,
  type TestClient,
} from "./scripted-runtime-test-client.js";

interface Entry {
  client: string;
  direction: "inbound" | "outbound";
  frame: Frame;
}

const real = (name: string): Entry[] =>
  JSON.parse(readFileSync(new URL(`../fixtures/real-peer/unkind/${name}.json`, import.meta.url), "utf8")) as Entry[];
const summary = JSON.parse(readFileSync(new URL("../fixtures/real-peer/unkind/summary.json", import.meta.url), "utf8")) as Record<
  string,
  Frame
>;
const inboundOf = (entries: Entry[], client = "A"): Frame[] =>
  entries.filter((entry) => entry.client === client && entry.direction === "inbound").map((entry) => entry.frame);

/** Field names and JSON types, recursively (arrays by their first element). */
function shape(value: unknown): unknown {
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "array" : [shape(value[0])];
  if (typeof value === "object")
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((key) => [key, shape((value as Frame)[key])]),
    );
  return typeof value;
}

let runtime: ScriptedRuntime | undefined;
afterEach(async () => {
  terminateClients();
  await runtime?.close();
  runtime = undefined;
});

async function start(options: StartScriptedRuntimeOptions): Promise<ScriptedRuntime> {
  runtime = await startScriptedRuntime(options);
  return runtime;
}

async function startRuntime(client: TestClient, extra: Frame = {}, tools: string[] = []): Promise<Frame> {
  const requestId = `rs-${Math.random()}`;
  client.send(
    startFrame(
      requestId,
      tools.map((name) => ({ name })),
      extra,
    ),
  );
  return (await client.waitFor((frame) => frame.request_id === requestId)).runtime as Frame;
}

const turnsFinished = (client: TestClient) => client.frames.filter((frame) => frame.type === "turn_finished").length;

describe("the scripted runtime is as unkind as the real one", () => {
  it("a repeated input (same request_id and client_message_id) after its run ended starts another run", async () => {
    // The real peer: both copies accepted with disposition "started", two runs, two turn_finished.
    expect(summary["repeated-input"]).toMatchObject({
      turnFinished: 2,
      inputAccepted: [
        { accepted: true, disposition: "started" },
        { accepted: true, disposition: "started" },
      ],
    });
    let runs = 0;
    const server = await start({
      script: async (turn) => {
        runs++;
        await turn.say("hi");
      },
    });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client);
    const frame = inputFrame("in-1", scope, "hello");
    client.send(frame);
    await client.waitFor(() => turnsFinished(client) === 1);
    client.send(frame);
    await client.waitFor(() => turnsFinished(client) === 2);
    expect(runs).toBe(2);
    expect(client.frames.filter((each) => each.type === "input_accepted").map((each) => [each.request_id, each.disposition])).toEqual([
      ["in-1", "started"],
      ["in-1", "started"],
    ]);
  });

  it("replays every pending approval, of every conversation, to a new connection before it sends anything", async () => {
    const recorded = real("approval-replay");
    const replayed = inboundOf(recorded, "B");
    expect(summary["approval-replay"]).toMatchObject({
      controlRequestsToBBeforeItSentAnything: 1,
      framesToBBeforeItSentAnything: ["control_request"],
    });
    const server = await start({
      permissionMode: "standard",
      script: async (turn) => void (await turn.callTool("get_weather", { city: "Oslo" })),
    });
    const owner = await connectClient(server.url);
    const scope = await startRuntime(owner, {}, ["get_weather"]);
    owner.send(inputFrame("in-1", scope, "weather?"));
    const pending = await owner.waitFor((frame) => frame.type === "control_request");
    const other = await connectClient(server.url);
    const first = await other.waitFor(() => true);
    expect(first).toMatchObject({ type: "control_request", request_id: pending.request_id, runtime: scope });
    expect(shape(first)).toEqual(shape(replayed[0]));
    await letTimePass(50); // on purpose: nothing but the replayed request may arrive within this window
    expect(other.frames.map((frame) => frame.type)).toEqual(["control_request"]);
  });

  it("sends a subagent's deltas on the parent's runtime scope with subagent_id, during the parent's turn, with its own stop_reasons", async () => {
    const recorded = inboundOf(real("subagent-during-turn")).filter(
      (frame) => frame.type === "stream_delta" && typeof frame.subagent_id === "string",
    );
    const server = await start({
      script: async (turn) => {
        await turn.runBuiltinTool(
          "Agent",
          { subagent_type: "general-purpose", description: "say hi", prompt: "say hi" },
          "Task running in background with task ID: task_1",
          { stream: false },
        );
        const subagent = turn.subagent({ description: "say hi", prompt: "say hi" });
        await subagent.say("subagent text before its tool");
        await subagent.runTool("Bash", { command: "echo from-subagent" }, "from-subagent\n");
        await subagent.say("subagent finished");
        await subagent.finish();
        await turn.say("parent done");
      },
    });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client);
    client.send(inputFrame("in-1", scope, "delegate"));
    await client.waitFor((frame) => frame.type === "turn_finished");
    const finishedAt = client.frames.findIndex((frame) => frame.type === "turn_finished");
    const produced = client.frames
      .slice(0, finishedAt)
      .filter((frame) => frame.type === "stream_delta" && typeof frame.subagent_id === "string");
    expect(
      produced.every((frame) => frame.runtime.agent_id === scope.agent_id && frame.runtime.conversation_id === scope.conversation_id),
    ).toBe(true);
    const kinds = (frames: Frame[]) =>
      frames.map((frame) => (frame.delta.message_type === "stop_reason" ? `stop:${frame.delta.stop_reason}` : frame.delta.message_type));
    expect(kinds(produced)).toEqual(kinds(recorded));
    for (const [index, frame] of produced.entries()) expect(shape(frame), kinds(produced)[index]).toEqual(shape(recorded[index]));
    const state = client.frames.filter((frame) => frame.type === "update_subagent_state" && frame.subagents.length > 0);
    const realState = inboundOf(real("subagent-during-turn")).find(
      (frame) => frame.type === "update_subagent_state" && frame.subagents[0]?.status === "running",
    )!;
    expect(Object.keys(state[0]!.subagents[0]).sort()).toEqual(Object.keys(realState.subagents[0]).sort());
    expect(state.at(-1)!.subagents[0]).toMatchObject({ status: "completed" });
  });

  it("streams a runtime tool's output as growing snapshots of one result, then the final one", async () => {
    const recorded = inboundOf(real("bash-snapshots")).filter((frame) => frame.type === "stream_delta");
    const server = await start({
      script: async (turn) => void (await turn.runBuiltinTool("Bash", { command: "count" }, "line1\nline2\nline3\nline4\n")),
    });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client);
    client.send(inputFrame("in-1", scope, "bash"));
    await client.waitFor((frame) => frame.type === "turn_finished");
    const toolKinds = (frames: Frame[]) =>
      frames
        .filter(
          (frame) =>
            frame.type === "stream_delta" &&
            /^(approval_request_message|client_tool_start|client_tool_end|tool_return_message)$/.test(frame.delta.message_type),
        )
        .map(
          (frame) =>
            `${frame.delta.message_type}${frame.delta.message_type === "tool_return_message" ? `:${String(frame.delta.id).startsWith("synthetic-tool-return-stream-") ? "snapshot" : "final"}` : ""}`,
        );
    expect(toolKinds(client.frames)).toEqual(toolKinds(recorded));
    const texts = (frames: Frame[]) =>
      frames.filter((frame) => frame.delta?.message_type === "tool_return_message").map((frame) => frame.delta.tool_return);
    expect(texts(client.frames)).toEqual(texts(recorded));
    const snapshot = (frames: Frame[]) =>
      frames.find((frame) => String(frame.delta?.id).startsWith("synthetic-tool-return-stream-"))!.delta;
    expect(shape(snapshot(client.frames))).toEqual(shape(snapshot(recorded)));
  });

  it("never re-sends a pending external tool request to the connection that comes back", async () => {
    expect(summary["request-after-reconnect"]).toMatchObject({ requestsToFirstSocket: 1, requestsToSecondSocket: 0 });
    const server = await start({ script: async (turn) => void (await turn.callTool("get_weather", { city: "Oslo" })) });
    const first = await connectClient(server.url);
    const scope = await startRuntime(first, {}, ["get_weather"]);
    first.send(inputFrame("in-1", scope, "weather?"));
    await first.waitFor((frame) => frame.type === "external_tool_call_request");
    await first.close();
    const second = await connectClient(server.url);
    await startRuntime(
      second,
      { agent_id: scope.agent_id, conversation_id: scope.conversation_id, create_agent: undefined, create_conversation: undefined },
      ["get_weather"],
    );
    second.send({ type: "sync", request_id: "sync-1", runtime: scope });
    await second.waitFor((frame) => frame.type === "sync_response");
    await letTimePass(100); // on purpose: the pending request is never re-sent, not within this window either
    expect(second.frames.filter((frame) => frame.type === "external_tool_call_request")).toEqual([]);
    expect(server.calls.map((call) => call.status)).toEqual(["connection-closed"]);
  });

  it("lets a script reuse call_0 in every turn; each call gets a fresh request_id, like the real one", async () => {
    const reuse = summary["reused-tool-call-id"] as { externalRequests: Array<{ request_id: string; tool_call_id: string }> };
    expect(new Set(reuse.externalRequests.map((request) => request.tool_call_id))).toEqual(new Set(["call_0"]));
    expect(new Set(reuse.externalRequests.map((request) => request.request_id)).size).toBe(reuse.externalRequests.length);
    const server = await start({
      script: async (turn) => void (await turn.callTool("get_weather", { city: "Paris" }, { toolCallId: "call_0" })),
    });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client, {}, ["get_weather"]);
    for (const turn of [1, 2]) {
      client.send(inputFrame(`in-${turn}`, scope, `turn ${turn}`));
      const request = await client.waitFor((frame) => frame.type === "external_tool_call_request" && frame.answered !== true);
      request.answered = true;
      client.send({
        type: "external_tool_call_response",
        request_id: request.request_id,
        result: { content: [{ type: "text", text: "Sunny" }] },
      });
      await client.waitFor(() => turnsFinished(client) === turn);
    }
    expect(server.calls.map((call) => call.toolCallId)).toEqual(["call_0", "call_0"]);
    expect(new Set(server.calls.map((call) => call.requestId)).size).toBe(2);
  });
});
