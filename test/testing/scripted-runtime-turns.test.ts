import { afterEach, describe, expect, it } from "vitest";
import {
  startScriptedRuntime,
  type ScriptedRuntime,
  type ScriptedToolResult,
  type ScriptedTurn,
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

async function startRuntime(client: TestClient, tools: string[], extra: Frame = {}): Promise<Frame> {
  const requestId = `rs-${Math.random()}`;
  client.send(
    startFrame(
      requestId,
      tools.map((name) => ({ name })),
      extra,
    ),
  );
  const response = await client.waitFor((frame) => frame.request_id === requestId);
  return response.runtime as Frame;
}

describe("scripted runtime: abort, queue, errors", () => {
  it("abort: the in-flight call stays pending, the turn ends cancelled once it is answered", async () => {
    let seen: { result: ScriptedToolResult; aborted: boolean } | undefined;
    const server = await start({
      script: async (turn) => {
        const result = await turn.callTool("slow", {});
        seen = { result, aborted: turn.signal.aborted };
        await turn.say("never streamed");
      },
    });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client, ["slow"]);
    client.send({ type: "abort_message", request_id: "ab-idle", runtime: scope });
    expect(await client.waitFor((frame) => frame.request_id === "ab-idle")).toEqual({
      type: "abort_message_response",
      request_id: "ab-idle",
      runtime: scope,
      aborted: false,
      success: true,
    });
    client.send(inputFrame("in-1", scope, "go"));
    const request = await client.waitFor((frame) => frame.type === "external_tool_call_request");
    client.send({ type: "abort_message", request_id: "ab-1", runtime: scope });
    expect(await client.waitFor((frame) => frame.request_id === "ab-1")).toMatchObject({ aborted: true, success: true });
    const interrupted = await client.waitFor((frame) => frame.delta?.message_type === "status");
    expect(interrupted.delta).toMatchObject({ message: "Interrupted", level: "warning" });
    await letTimePass(30); // on purpose: the turn may not finish while the call is pending
    expect(client.frames.some((frame) => frame.type === "turn_finished")).toBe(false);
    expect(server.calls[0]?.status).toBe("pending");
    client.send({
      type: "external_tool_call_response",
      request_id: request.request_id,
      result: { content: [{ type: "text", text: "late" }] },
    });
    const finished = await client.waitFor((frame) => frame.type === "turn_finished");
    expect(finished).toMatchObject({ stop_reason: "cancelled" });
    expect(seen).toEqual({ result: { content: [{ type: "text", text: "late" }], isError: false, toolReturn: "late" }, aborted: true });
    expect(client.frames.some((frame) => frame.delta?.content?.[0]?.text === "never streamed")).toBe(false);
  });

  it("queues a second input while a turn runs and runs it afterwards; a repeated input (same request_id and client_message_id) runs again, like the real runtime", async () => {
    const texts: string[] = [];
    let release: (() => void) | undefined;
    const server = await start({
      script: async (turn) => {
        texts.push(turn.userText);
        if (texts.length === 1) await new Promise<void>((resolve) => (release = resolve));
        await turn.say(`echo ${turn.userText}`);
      },
    });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client, []);
    client.send(inputFrame("in-1", scope, "first"));
    await client.waitFor((frame) => frame.request_id === "in-1");
    client.send(inputFrame("in-2", scope, "second"));
    expect(await client.waitFor((frame) => frame.request_id === "in-2")).toMatchObject({ accepted: true, disposition: "queued" });
    const queued = await client.waitFor((frame) => frame.type === "update_queue" && frame.queue.length === 1);
    expect(queued.queue[0]).toMatchObject({ client_message_id: "cm-in-2", kind: "message", source: "user", content: "second" });
    const mark = client.frames.length;
    client.send(inputFrame("in-2", scope, "second")); // the very same frame again
    expect(await client.waitFor((frame) => frame.request_id === "in-2", { from: mark })).toMatchObject({
      accepted: true,
      disposition: "queued",
    });
    release?.();
    await client.waitFor(() => client.frames.filter((frame) => frame.type === "turn_finished").length === 3);
    expect(texts).toEqual(["first", "second", "second"]);
    expect(client.frames.filter((frame) => frame.type === "turn_finished").map((frame) => frame.stop_reason)).toEqual([
      "end_turn",
      "end_turn",
      "end_turn",
    ]);
    expect(client.frames.find((frame) => frame.delta?.message_type === "user_message")?.delta).toMatchObject({
      content: "second",
      otid: "cm-in-2",
    });
  });

  it("turn.fail() ends the turn as an error turn, and is not a script error", async () => {
    const server = await start({ script: (turn) => turn.fail("model exploded") });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client, []);
    client.send(inputFrame("in-1", scope, "go"));
    const finished = await client.waitFor((frame) => frame.type === "turn_finished");
    expect(finished).toMatchObject({ stop_reason: "error", error: "model exploded" });
    const loopError = await client.waitFor((frame) => frame.delta?.message_type === "loop_error");
    expect(loopError.delta).toMatchObject({ message: "model exploded", stop_reason: "error", is_terminal: true });
    expect(client.frames.find((frame) => frame.delta?.message_type === "stop_reason")?.delta.stop_reason).toBe("error");
    expect(server.scriptErrors).toEqual([]);
    await expect(server.close()).resolves.toBeUndefined();
  });

  it("a script that throws (a failed expect()) ends its turn as an error turn and fails the test: close() rejects with it", async () => {
    const server = await start({
      script: async (turn) => {
        expect(turn.userText, "the script's own assertion").toBe("something else");
      },
    });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client, []);
    client.send(inputFrame("in-1", scope, "go"));
    const finished = await client.waitFor((frame) => frame.type === "turn_finished");
    expect(finished).toMatchObject({ stop_reason: "error", error: expect.stringContaining("the script's own assertion") });
    expect(server.scriptErrors).toHaveLength(1);
    await expect(server.close()).rejects.toThrow(/the script's own assertion/);
    runtime = undefined; // closed (and its rejection checked) here
  });

  it("several script errors: close() rejects with an AggregateError of all of them", async () => {
    const server = await start({ script: (turn) => Promise.reject(new Error(`bug in ${turn.userText}`)) });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client, []);
    client.send(inputFrame("in-1", scope, "one"));
    await client.waitFor((frame) => frame.type === "turn_finished");
    client.send(inputFrame("in-2", scope, "two"));
    await client.waitFor(() => client.frames.filter((frame) => frame.type === "turn_finished").length === 2);
    const error = await server.close().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors.map((inner: Error) => inner.message)).toEqual(["bug in one", "bug in two"]);
    runtime = undefined;
  });
});

describe("scripted runtime: approvals (standard mode)", () => {
  it("asks with control_request, runs on allow (with updated_input), skips the request on deny", async () => {
    const results: ScriptedToolResult[] = [];
    const server = await start({
      permissionMode: "standard",
      script: async (turn) => {
        results.push(await turn.callTool("write", { path: "a" }, { toolCallId: "call_1" }));
        results.push(await turn.callTool("write", { path: "b" }, { toolCallId: "call_2" }));
      },
    });
    const client = await connectClient(server.url);
    const scope = await startRuntime(client, ["write"]);
    client.send(inputFrame("in-1", scope, "go"));
    const ask = await client.waitFor((frame) => frame.type === "control_request");
    expect(ask).toMatchObject({
      request_id: "perm-call_1",
      request: { subtype: "can_use_tool", tool_name: "write", input: { path: "a" }, tool_call_id: "call_1", blocked_path: null },
      agent_id: scope.agent_id,
      conversation_id: scope.conversation_id,
      runtime: scope,
      event_seq: expect.any(Number),
      idempotency_key: expect.stringMatching(/^control_request:\d+:/),
    });
    expect(client.frames.some((frame) => frame.loop_status?.status === "WAITING_ON_APPROVAL")).toBe(true);
    const approve = (requestId: string, decision: Frame): void =>
      client.send({
        type: "input",
        request_id: `ap-${requestId}`,
        runtime: scope,
        payload: { kind: "approval_response", request_id: requestId, decision },
      });
    approve("perm-call_1", { behavior: "allow", updated_input: { path: "a2" } });
    expect(await client.waitFor((frame) => frame.request_id === "ap-perm-call_1")).toEqual({
      type: "input_accepted",
      request_id: "ap-perm-call_1",
      runtime: scope,
      accepted: true,
    });
    const request = await client.waitFor((frame) => frame.type === "external_tool_call_request");
    expect(request.input).toEqual({ path: "a2" });
    client.send({
      type: "external_tool_call_response",
      request_id: request.request_id,
      result: { content: [{ type: "text", text: "ok" }] },
    });
    await client.waitFor((frame) => frame.type === "control_request" && frame.request_id === "perm-call_2");
    approve("perm-call_2", { behavior: "deny", message: "nope" });
    await client.waitFor((frame) => frame.type === "turn_finished");
    expect(results.map((result) => [result.isError, result.toolReturn])).toEqual([
      [false, "ok"],
      [true, "nope"],
    ]);
    expect(client.frames.filter((frame) => frame.type === "external_tool_call_request")).toHaveLength(1);
    approve("perm-call_2", { behavior: "allow" });
    expect(await client.waitFor((frame) => frame.request_id === "ap-perm-call_2" && frame.accepted === false)).toMatchObject({
      error: "Approval request is no longer pending",
    });
  });
});

describe("scripted runtime: connections", () => {
  it("keeps two connections isolated: own event_seq, own calls, responses keyed by connection", async () => {
    const server = await start({
      script: async (turn) => {
        const result = await turn.callTool(turn.tools[0]!.name, {});
        await turn.say(result.toolReturn);
      },
    });
    const alpha = await connectClient(server.url);
    const beta = await connectClient(server.url);
    const alphaScope = await startRuntime(alpha, ["alpha_tool"]);
    const betaScope = await startRuntime(beta, ["beta_tool"]);
    alpha.send(inputFrame("in-a", alphaScope, "go"));
    const alphaRequest = await alpha.waitFor((frame) => frame.type === "external_tool_call_request");
    expect(alphaRequest.tool_name).toBe("alpha_tool");
    // beta cannot answer alpha's request: the runtime keys pending calls by [connection, request_id].
    beta.send({
      type: "external_tool_call_response",
      request_id: alphaRequest.request_id,
      result: { content: [{ type: "text", text: "from beta" }] },
    });
    await letTimePass(30); // on purpose: beta's answer must settle nothing within this window
    expect(server.calls[0]?.status).toBe("pending");
    alpha.send({
      type: "external_tool_call_response",
      request_id: alphaRequest.request_id,
      result: { content: [{ type: "text", text: "from alpha" }] },
    });
    await alpha.waitFor((frame) => frame.type === "turn_finished");
    expect(beta.frames.some((frame) => frame.runtime?.conversation_id === alphaScope.conversation_id)).toBe(false);
    expect(beta.frames.some((frame) => frame.type === "external_tool_call_request")).toBe(false);
    beta.send(inputFrame("in-b", betaScope, "go"));
    const betaRequest = await beta.waitFor((frame) => frame.type === "external_tool_call_request");
    expect(betaRequest.tool_name).toBe("beta_tool");
    const seqs = (client: TestClient): number[] =>
      client.frames.filter((frame) => typeof frame.event_seq === "number").map((frame) => frame.event_seq);
    expect(seqs(beta)[0]).toBe(1);
    expect(seqs(alpha)[0]).toBe(1);
  });

  it("a closing connection drops its pending calls and its tools; the turn continues for another subscriber", async () => {
    let result: ScriptedToolResult | undefined;
    let turnSeen: ScriptedTurn | undefined;
    const server = await start({
      script: async (turn) => {
        turnSeen = turn;
        result = await turn.callTool("owned", {});
        await turn.say("after");
      },
    });
    const owner = await connectClient(server.url);
    const watcher = await connectClient(server.url);
    const scope = await startRuntime(owner, ["owned"]);
    watcher.send({ type: "sync", request_id: "sync-1", runtime: scope });
    await watcher.waitFor((frame) => frame.type === "sync_response");
    owner.send(inputFrame("in-1", scope, "go"));
    await owner.waitFor((frame) => frame.type === "external_tool_call_request");
    await owner.close();
    const finished = await watcher.waitFor((frame) => frame.type === "turn_finished");
    expect(finished.stop_reason).toBe("end_turn");
    expect(result).toMatchObject({
      isError: true,
      error: "Listener connection closed",
      toolReturn: "External tool execution error: Listener connection closed",
    });
    expect(server.calls[0]?.status).toBe("connection-closed");
    expect(server.registrations()).toEqual([]);
    expect(turnSeen?.connectionId).toBe("app-server-1");
    expect(turnSeen?.signal.aborted).toBe(false);
  });

  it("cancels the turn when its only subscriber closes", async () => {
    let aborted: boolean | undefined;
    const server = await start({
      script: async (turn) => {
        await turn.callTool("owned", {});
        aborted = turn.signal.aborted;
      },
    });
    const owner = await connectClient(server.url);
    const scope = await startRuntime(owner, ["owned"]);
    owner.send(inputFrame("in-1", scope, "go"));
    await owner.waitFor((frame) => frame.type === "external_tool_call_request");
    await owner.close();
    await expect.poll(() => aborted, { timeout: 2000 }).toBe(true);
    expect(server.calls[0]?.status).toBe("connection-closed");
  });

  it("shows scoped tools only to turns from the registering connection that select the scope", async () => {
    const seen: string[][] = [];
    const server = await start({ script: (turn) => void seen.push(turn.tools.map((tool) => tool.name)) });
    const owner = await connectClient(server.url);
    const other = await connectClient(server.url);
    const scope = await startRuntime(owner, ["plain"]);
    owner.send({
      type: "runtime_external_tools_update",
      request_id: "up-1",
      updates: [
        {
          runtimes: [scope],
          external_tools: [
            { tools: [{ name: "plain", description: "p", parameters: {} }] },
            { scope_id: "s1", tools: [{ name: "scoped", description: "s", parameters: {} }] },
          ],
        },
      ],
    });
    await owner.waitFor((frame) => frame.request_id === "up-1");
    const run = async (client: TestClient, requestId: string, extra: Frame): Promise<void> => {
      const before = seen.length;
      client.send(inputFrame(requestId, scope, "go", extra));
      await expect.poll(() => seen.length, { timeout: 2000 }).toBe(before + 1);
    };
    await run(owner, "in-1", {});
    await run(owner, "in-2", { external_tool_scope_ids: ["s1"] });
    await run(other, "in-3", { external_tool_scope_ids: ["s1"] });
    await run(owner, "in-4", { external_tool_scope_ids: ["s1"], client_tool_allowlist: ["scoped"] });
    expect(seen).toEqual([["plain"], ["plain", "scoped"], ["plain"], ["scoped"]]);
  });
});
