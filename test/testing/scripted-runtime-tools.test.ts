import { afterEach, describe, expect, it } from "vitest";
import {
  startScriptedRuntime,
  type ScriptedRuntime,
  type ScriptedToolResult,
  type TurnScript,
} from "../../packages/toolrelay/src/testing/index.js";
import { connectClient, inputFrame, letTimePass, startFrame, terminateClients, type Frame } from "./scripted-runtime-test-client.js";

let runtime: ScriptedRuntime | undefined;

afterEach(async () => {
  terminateClients();
  await runtime?.close();
  runtime = undefined;
});

async function start(script: TurnScript, options: { externalToolTimeoutMs?: number } = {}): Promise<ScriptedRuntime> {
  runtime = await startScriptedRuntime({ script, ...options });
  return runtime;
}

const isEvent = (frame: Frame): boolean =>
  typeof frame.event_seq === "number" && typeof frame.emitted_at === "string" && typeof frame.idempotency_key === "string";

describe("scripted runtime: external tool calls", () => {
  it("runs a tool round trip with the real runtime's frames, in order", async () => {
    const results: ScriptedToolResult[] = [];
    const server = await start(async (turn) => {
      await turn.say("checking");
      results.push(await turn.callTool("get_weather", { city: "Paris" }, { toolCallId: "call_1" }));
      await turn.say(`done: ${results[0]!.toolReturn}`);
    });
    const client = await connectClient(server.url);
    client.send(startFrame("rs-1", [{ name: "get_weather" }]));
    const started = await client.waitFor((frame) => frame.type === "runtime_start_response");
    expect(started).toMatchObject({ success: true, created: { agent: true, conversation: true } });
    expect(started.runtime.agent_id).toMatch(/^agent-/);
    expect(started.runtime.conversation_id).toMatch(/^conv-/);
    expect(isEvent(started)).toBe(false);
    const from = client.frames.length;
    client.send(inputFrame("in-1", started.runtime, "weather?"));
    const request = await client.waitFor((frame) => frame.type === "external_tool_call_request");
    expect(request).toEqual({
      type: "external_tool_call_request",
      request_id: expect.stringMatching(/^external-tool-[0-9a-f-]{36}$/),
      runtime: started.runtime,
      tool_call_id: "call_1",
      tool_name: "get_weather",
      input: { city: "Paris" },
    });
    client.send({
      type: "external_tool_call_response",
      request_id: request.request_id,
      result: { content: [{ type: "text", text: "sunny" }] },
    });
    const finished = await client.waitFor((frame) => frame.type === "turn_finished");
    expect(finished).toMatchObject({ stop_reason: "end_turn", turn_id: expect.stringMatching(/^batch-direct-/), runtime: started.runtime });
    expect(results).toEqual([{ content: [{ type: "text", text: "sunny" }], isError: false, toolReturn: "sunny" }]);

    const turnFrames = client.frames.slice(from);
    expect(turnFrames[0]).toEqual({
      type: "input_accepted",
      request_id: "in-1",
      runtime: started.runtime,
      accepted: true,
      disposition: "started",
    });
    const deltas = turnFrames.filter((frame) => frame.type === "stream_delta").map((frame) => frame.delta.message_type);
    expect(deltas).toEqual([
      "assistant_message",
      "approval_request_message",
      "usage_statistics",
      "stop_reason",
      "approval_classification_end",
      "client_tool_start",
      "client_tool_end",
      "tool_return_message",
      "assistant_message",
      "usage_statistics",
      "stop_reason",
    ]);
    const delta = (type: string): Frame => turnFrames.find((frame) => frame.delta?.message_type === type)!.delta;
    expect(delta("client_tool_start")).toMatchObject({ tool_call_id: "call_1", tool_name: "get_weather", tool_args: '{"city":"Paris"}' });
    expect(delta("client_tool_start").id).toBe(delta("approval_request_message").id);
    expect(delta("tool_return_message")).toMatchObject({
      type: "message",
      status: "success",
      tool_call_id: "call_1",
      tool_return: "sunny",
      tool_returns: [{ tool_call_id: "call_1", status: "success", tool_return: "sunny" }],
    });
    const stopReasons = turnFrames.filter((frame) => frame.delta?.message_type === "stop_reason").map((frame) => frame.delta);
    expect(stopReasons.map((stop) => stop.stop_reason)).toEqual(["requires_approval", "end_turn"]);
    expect(stopReasons[0].run_id).not.toBe(stopReasons[1].run_id);
    expect(finished.run_id).toBe(stopReasons[1].run_id);
    const executing = turnFrames.find((frame) => frame.loop_status?.status === "EXECUTING_CLIENT_SIDE_TOOL");
    expect(executing?.loop_status.executing_tool_call_ids).toEqual(["call_1"]);
    const lastLoop = turnFrames.filter((frame) => frame.type === "update_loop_status").at(-1);
    expect(lastLoop?.loop_status).toMatchObject({ status: "WAITING_ON_INPUT", active_run_ids: [], executing_tool_call_ids: [] });

    // Envelope on runtime events only; event_seq counts 1, 2, 3, ... on this connection.
    for (const frame of client.frames) {
      const expected = [
        "stream_delta",
        "update_loop_status",
        "update_device_status",
        "update_queue",
        "update_subagent_state",
        "turn_finished",
      ];
      expect(isEvent(frame)).toBe(expected.includes(frame.type));
    }
    expect(client.frames.filter(isEvent).map((frame) => frame.event_seq)).toEqual(
      client.frames.filter(isEvent).map((_frame, index) => index + 1),
    );
    expect(server.calls).toMatchObject([{ requestId: request.request_id, status: "answered", toolCallId: "call_1", result: results[0] }]);
  });

  it("wraps a client error and passes an is_error result through", async () => {
    const results: ScriptedToolResult[] = [];
    const server = await start(async (turn) => {
      results.push(await turn.callTool("flaky", {}));
      results.push(await turn.callTool("flaky", {}));
    });
    const client = await connectClient(server.url);
    client.send(startFrame("rs-1", [{ name: "flaky" }]));
    const { runtime: scope } = await client.waitFor((frame) => frame.type === "runtime_start_response");
    client.send(inputFrame("in-1", scope, "go"));
    const first = await client.waitFor((frame) => frame.type === "external_tool_call_request");
    client.send({ type: "external_tool_call_response", request_id: first.request_id, error: "boom" });
    const second = await client.waitFor((frame) => frame.type === "external_tool_call_request" && frame.request_id !== first.request_id);
    client.send({
      type: "external_tool_call_response",
      request_id: second.request_id,
      result: { content: [{ type: "text", text: "bad input" }], is_error: true },
    });
    await client.waitFor((frame) => frame.type === "turn_finished");
    expect(results).toEqual([
      { content: [], isError: true, error: "boom", toolReturn: "External tool execution error: boom" },
      { content: [{ type: "text", text: "bad input" }], isError: true, toolReturn: "bad input" },
    ]);
    const ends = client.frames.filter((frame) => frame.delta?.message_type === "client_tool_end").map((frame) => frame.delta.status);
    expect(ends).toEqual(["error", "error"]);
  });

  it("answers an unregistered tool with 'Tool not found' and sends no request", async () => {
    let result: ScriptedToolResult | undefined;
    const server = await start(async (turn) => {
      result = await turn.callTool("nope_tool", { a: 1 });
    });
    const client = await connectClient(server.url);
    client.send(startFrame("rs-1", [{ name: "get_weather" }]));
    const { runtime: scope } = await client.waitFor((frame) => frame.type === "runtime_start_response");
    client.send(inputFrame("in-1", scope, "go"));
    await client.waitFor((frame) => frame.type === "turn_finished");
    expect(result).toMatchObject({ isError: true, toolReturn: "Tool not found: nope_tool. Available tools: get_weather" });
    expect(client.frames.some((frame) => frame.type === "external_tool_call_request")).toBe(false);
    expect(server.calls).toHaveLength(0);
  });

  it("times out like the runtime: no frame on timeout, a late answer is ignored", async () => {
    let result: ScriptedToolResult | undefined;
    const server = await start(
      async (turn) => {
        result = await turn.callTool("slow", {});
      },
      { externalToolTimeoutMs: 50 },
    );
    const client = await connectClient(server.url);
    client.send(startFrame("rs-1", [{ name: "slow" }]));
    const { runtime: scope } = await client.waitFor((frame) => frame.type === "runtime_start_response");
    client.send(inputFrame("in-1", scope, "go"));
    const request = await client.waitFor((frame) => frame.type === "external_tool_call_request");
    await client.waitFor((frame) => frame.type === "turn_finished");
    expect(result).toMatchObject({ isError: true, error: "External tool call timed out: slow" });
    expect(result?.toolReturn).toBe("External tool execution error: External tool call timed out: slow");
    const count = client.frames.length;
    client.send({ type: "external_tool_call_response", request_id: request.request_id, result: { content: [] } });
    await letTimePass(50); // on purpose: a late answer gets nothing back within this window
    expect(client.frames.length).toBe(count);
    expect(server.calls[0]).toMatchObject({ status: "timed-out" });
  });

  it("re-sends a call for the same tool_call_id under a new request_id", async () => {
    const results: ScriptedToolResult[] = [];
    const server = await start(async (turn) => {
      results.push(await turn.callTool("write_file", { path: "a" }, { toolCallId: "call_dup" }));
      results.push(await turn.resendToolCall("call_dup"));
    });
    const client = await connectClient(server.url);
    client.send(startFrame("rs-1", [{ name: "write_file" }]));
    const { runtime: scope } = await client.waitFor((frame) => frame.type === "runtime_start_response");
    client.send(inputFrame("in-1", scope, "go"));
    const first = await client.waitFor((frame) => frame.type === "external_tool_call_request");
    client.send({
      type: "external_tool_call_response",
      request_id: first.request_id,
      result: { content: [{ type: "text", text: "one" }] },
    });
    const second = await client.waitFor((frame) => frame.type === "external_tool_call_request" && frame.request_id !== first.request_id);
    expect(second).toMatchObject({ tool_call_id: "call_dup", tool_name: "write_file", input: { path: "a" } });
    client.send({
      type: "external_tool_call_response",
      request_id: second.request_id,
      result: { content: [{ type: "text", text: "two" }] },
    });
    await client.waitFor((frame) => frame.type === "turn_finished");
    expect(results.map((result) => result.toolReturn)).toEqual(["one", "two"]);
  });

  it("sends the requests of a multi-tool response one after another", async () => {
    const server = await start(async (turn) => {
      await turn.callTools([
        { name: "a", toolCallId: "call_a" },
        { name: "b", toolCallId: "call_b" },
      ]);
    });
    const client = await connectClient(server.url);
    client.send(startFrame("rs-1", [{ name: "a" }, { name: "b" }]));
    const { runtime: scope } = await client.waitFor((frame) => frame.type === "runtime_start_response");
    client.send(inputFrame("in-1", scope, "go"));
    const first = await client.waitFor((frame) => frame.type === "external_tool_call_request");
    await letTimePass(30); // on purpose: the second request may not come before the first is answered
    expect(client.frames.filter((frame) => frame.type === "external_tool_call_request")).toHaveLength(1);
    expect(client.frames.filter((frame) => frame.delta?.message_type === "client_tool_start")).toHaveLength(2);
    client.send({ type: "external_tool_call_response", request_id: first.request_id, result: { content: [] } });
    const second = await client.waitFor((frame) => frame.type === "external_tool_call_request" && frame.tool_call_id === "call_b");
    client.send({ type: "external_tool_call_response", request_id: second.request_id, result: { content: [] } });
    await client.waitFor((frame) => frame.type === "turn_finished");
    const order = client.frames
      .filter((frame) => ["client_tool_end", "tool_return_message"].includes(frame.delta?.message_type))
      .map((frame) => `${frame.delta.message_type}:${frame.delta.tool_call_id}`);
    expect(order).toEqual(["client_tool_end:call_a", "client_tool_end:call_b", "tool_return_message:call_a", "tool_return_message:call_b"]);
  });
});
