import { afterEach, describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import type { FakeListener } from "./support/fake-listener.js";
import { waitForClose, type JsonFrame } from "./support/frame-log.js";
import type { RawStatusClient } from "./support/raw-status-client.js";
import { letTimePass, RelayFixture } from "./support/relay-fixture.js";

const fixture = new RelayFixture();
afterEach(() => fixture.cleanup());

const runtime = { agent_id: "agent-1", conversation_id: "conv-1" };
const tools = [{ tools: [{ name: "echo", description: "echo", parameters: { type: "object" } }] }];

function toolRequest(requestId: string, scope: typeof runtime | null = runtime): JsonFrame {
  return {
    type: "external_tool_call_request",
    request_id: requestId,
    ...(scope ? { runtime: scope } : {}),
    tool_call_id: "tc-1",
    tool_name: "echo",
    input: { text: "hi" },
  };
}

function toolResponse(requestId: string, text = "ok"): JsonFrame {
  return { type: "external_tool_call_response", request_id: requestId, result: { content: [{ type: "text", text }] } };
}

/** Resolves with the first frame of `type` that arrives on exactly this socket. */
function nextOnSocket(socket: WebSocket, type: string, timeoutMs = 5_000): Promise<JsonFrame> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${type} on this socket`)), timeoutMs);
    const onMessage = (data: Buffer): void => {
      const frame = JSON.parse(data.toString()) as JsonFrame;
      if (frame.type !== type) return;
      clearTimeout(timer);
      socket.off("message", onMessage);
      resolve(frame);
    };
    socket.on("message", onMessage);
  });
}

async function registerTools(sdk: RawStatusClient, listener: FakeListener, requestId: string, scope?: typeof runtime): Promise<void> {
  const from = listener.logs.control.frames.length;
  sdk.send({
    type: "runtime_start",
    request_id: requestId,
    ...(scope ? { agent_id: scope.agent_id, conversation_id: scope.conversation_id } : {}),
    external_tools: tools,
  });
  await listener.logs.control.waitForType("runtime_start", { from, where: (frame) => frame.request_id === requestId });
}

describe("outstanding tool calls", () => {
  it("go to the session that registered tools for the runtime; one answer reaches the listener, a repeat is dropped", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const owner = await fixture.sdk(connectionId, { sessionId: "owner", agentId: "agent-1", conversationId: "conv-1" });
    await registerTools(owner, listener, "start-1", runtime);
    // attached after the owner registered: the most recent session of the runtime, but not the owner
    const watcher = await fixture.sdk(connectionId, { sessionId: "watcher", agentId: "agent-1", conversationId: "conv-1" });
    listener.sendControl(toolRequest("external-tool-1"));
    const request = await owner.waitFor("external_tool_call_request");
    expect(request).toMatchObject({ request_id: "external-tool-1", seq: 1, input: { text: "hi" } });
    owner.send(toolResponse("external-tool-1", "first"));
    owner.send(toolResponse("external-tool-1", "second"));
    const forwarded = await listener.logs.control.waitForType("external_tool_call_response");
    expect(forwarded).toEqual(toolResponse("external-tool-1", "first"));
    await owner.flush("control");
    expect(listener.logs.control.ofType("external_tool_call_response")).toHaveLength(1);
    expect(watcher.logs.control.ofType("external_tool_call_request")).toHaveLength(0);
    expect(fixture.relay.environment(connectionId)?.outstandingCalls).toEqual([]);
  });

  it.each(["paired", "single"] as const)("survive a listener reconnect (%s): the answer reaches the new control socket", async (mode) => {
    await fixture.start({ listenerMode: mode });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const sdk = await fixture.sdk(connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    await registerTools(sdk, listener, "start-1", runtime);
    listener.sendControl(toolRequest("external-tool-7"));
    await sdk.waitFor("external_tool_call_request");
    const oldControl = listener.control as WebSocket;
    const down = fixture.nextEvent("listener-down");
    fixture.relay.closeListener(connectionId, 1012);
    await down;
    expect(fixture.relay.environment(connectionId)?.outstandingCalls).toEqual(["external-tool-7"]);
    await listener.connect();
    const newControl = listener.control as WebSocket;
    expect(newControl).not.toBe(oldControl);
    const arrived = nextOnSocket(newControl, "external_tool_call_response");
    sdk.send(toolResponse("external-tool-7"));
    expect(await arrived).toMatchObject({ request_id: "external-tool-7" });
  });

  it.each(["paired", "single"] as const)(
    "an answer written to a listener socket that then died is written again on the listener's reconnect (%s): the listener ignores a repeat, a lost one settles (found by the cluster load harness)",
    async (mode) => {
      await fixture.start({ listenerMode: mode });
      const listener = await fixture.listener();
      const { connectionId } = listener.answer;
      const sdk = await fixture.sdk(connectionId, { agentId: "agent-1", conversationId: "conv-1" });
      await registerTools(sdk, listener, "start-1", runtime);
      listener.sendControl(toolRequest("external-tool-9"));
      await sdk.waitFor("external_tool_call_request");
      sdk.send(toolResponse("external-tool-9", "written once"));
      // It went out on the old socket (which, for the relay, could have been dying: it cannot tell).
      await listener.logs.control.waitForType("external_tool_call_response");
      expect(fixture.relay.environment(connectionId)?.outstandingCalls).toEqual([]);
      const down = fixture.nextEvent("listener-down");
      fixture.relay.closeListener(connectionId, 1012);
      await down;
      const from = listener.logs.control.frames.length;
      await listener.connect();
      const again = await listener.logs.control.waitForType("external_tool_call_response", { from });
      expect(again).toEqual(toolResponse("external-tool-9", "written once"));
    },
  );

  it("an answer sent while the listener is away is queued and delivered when it is back", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const sdk = await fixture.sdk(connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    await registerTools(sdk, listener, "start-1", runtime);
    listener.sendControl(toolRequest("external-tool-8"));
    await sdk.waitFor("external_tool_call_request");
    const down = fixture.nextEvent("listener-down");
    fixture.relay.closeListener(connectionId, 1012);
    await down;
    const answered = fixture.nextEvent("tool-call-answered");
    sdk.send(toolResponse("external-tool-8"));
    expect((await answered)[0]).toEqual({ connectionId, requestId: "external-tool-8", delivery: "queued" });
    const from = listener.logs.control.frames.length;
    await listener.connect();
    await listener.logs.control.waitForType("external_tool_call_response", { from });
  });

  it("survive an SDK reconnect: an unacknowledged request is redelivered with its seq", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const first = await fixture.sdk(connectionId, { sessionId: "sdk-a", agentId: "agent-1", conversationId: "conv-1", autoAck: false });
    await registerTools(first, listener, "start-1", runtime);
    listener.sendControl(toolRequest("external-tool-9"));
    const original = await first.waitFor("external_tool_call_request");
    first.terminate();
    const second = await fixture.sdk(connectionId, { sessionId: "sdk-a" });
    const again = await second.waitFor("external_tool_call_request");
    expect(again).toEqual(original);
    await second.flush("control");
    expect(second.logs.control.ofType("external_tool_call_request")).toHaveLength(1);
    second.send(toolResponse("external-tool-9"));
    await listener.logs.control.waitForType("external_tool_call_response");
  });

  it("a request that arrives while the SDK is reconnecting is delivered on resume", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const first = await fixture.sdk(connectionId, { sessionId: "sdk-a", agentId: "agent-1", conversationId: "conv-1" });
    await registerTools(first, listener, "start-1", runtime);
    const detached = fixture.nextEvent("sdk-detached");
    first.terminate();
    await detached;
    listener.sendControl(toolRequest("external-tool-10"));
    const requested = await fixture.nextEvent("tool-call-requested");
    expect(requested[0].delivered).toBe(true);
    const second = await fixture.sdk(connectionId, { sessionId: "sdk-a" });
    await second.waitFor("external_tool_call_request");
  });

  it("an anonymous client that reconnects and registers its tools again gets the unanswered request", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const first = await fixture.sdk(connectionId, {});
    await registerTools(first, listener, "start-1", runtime);
    listener.sendControl(toolRequest("external-tool-17"));
    await first.waitFor("external_tool_call_request");
    await first.flush("control"); // acknowledged
    first.terminate();
    const second = await fixture.sdk(connectionId, {});
    await registerTools(second, listener, "start-2", runtime);
    const again = await second.waitFor("external_tool_call_request");
    expect(again).toMatchObject({ request_id: "external-tool-17", seq: 1 });
    second.send(toolResponse("external-tool-17"));
    await listener.logs.control.waitForType("external_tool_call_response");
  });

  it("an acknowledged but unanswered request is offered again, once, when its session resumes (an ack does not survive a drop; the SDK deduplicates)", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const first = await fixture.sdk(connectionId, { sessionId: "sdk-a", agentId: "agent-1", conversationId: "conv-1" });
    await registerTools(first, listener, "start-1", runtime);
    listener.sendControl(toolRequest("external-tool-11"));
    await first.waitFor("external_tool_call_request");
    await first.flush("control");
    first.terminate();
    const second = await fixture.sdk(connectionId, { sessionId: "sdk-a" });
    await second.flush("control");
    await second.waitFor("external_tool_call_request", { timeoutMs: 2_000 });
    await letTimePass(30); // on purpose: no second copy may follow within this window
    expect(second.logs.control.ofType("external_tool_call_request").map((frame) => frame.request_id)).toEqual(["external-tool-11"]);
    expect(fixture.relay.environment(connectionId)?.outstandingCalls).toEqual(["external-tool-11"]);
  });

  it("pass to another session of the runtime when the owner's resume window ends", async () => {
    await fixture.start({ sdkResumeWindowMs: 50 });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const owner = await fixture.sdk(connectionId, { sessionId: "owner", agentId: "agent-1", conversationId: "conv-1" });
    const backup = await fixture.sdk(connectionId, { sessionId: "backup", agentId: "agent-1", conversationId: "conv-1" });
    await registerTools(owner, listener, "start-1", runtime);
    listener.sendControl(toolRequest("external-tool-12"));
    await owner.waitFor("external_tool_call_request");
    owner.terminate();
    const handedOver = await backup.waitFor("external_tool_call_request", { timeoutMs: 2_000 });
    expect(handedOver.request_id).toBe("external-tool-12");
  });

  it("wait for a session when none is attached, and go to the first one that attaches to the runtime", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const requested = fixture.nextEvent("tool-call-requested");
    listener.sendControl(toolRequest("external-tool-13"));
    expect((await requested)[0].delivered).toBe(false);
    const other = await fixture.sdk(connectionId, { agentId: "agent-9" });
    const late = await fixture.sdk(connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    await late.waitFor("external_tool_call_request");
    await letTimePass(30); // on purpose: the other session may get nothing within this window
    expect(other.logs.control.ofType("external_tool_call_request")).toHaveLength(0);
  });

  it("are not offered to a session that only names their runtime in a frame (refused); binding by runtime_start delivers them", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const sdk = await fixture.sdk(connectionId, { sessionId: "later-subscriber" });
    const requested = fixture.nextEvent("tool-call-requested");
    listener.sendControl(toolRequest("external-tool-16"));
    expect((await requested)[0].delivered).toBe(false);
    sdk.send({ type: "sync", runtime, request_id: "sync-foreign", recover_approvals: true });
    const refusal = await sdk.waitFor("sync_response");
    expect(refusal).toMatchObject({ request_id: "sync-foreign", success: false, error: expect.stringMatching(/^relay: .*not bound/) });
    expect(sdk.logs.control.ofType("external_tool_call_request")).toHaveLength(0);
    expect(listener.logs.control.ofType("sync")).toHaveLength(0);
    await registerTools(sdk, listener, "start-16", runtime);
    await sdk.waitFor("external_tool_call_request");
  });

  it("without a runtime are answered to the listener with an error at once (no session could own them)", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const sdk = await fixture.sdk(connectionId, { sessionId: "registrant" });
    await registerTools(sdk, listener, "start-1");
    const failed = fixture.nextEvent("tool-call-failed");
    listener.sendControl(toolRequest("external-tool-14", null));
    const response = await listener.logs.control.waitForType("external_tool_call_response");
    expect(response).toEqual({
      type: "external_tool_call_response",
      request_id: "external-tool-14",
      error: expect.stringContaining("names no runtime"),
    });
    expect((await failed)[0]).toMatchObject({ connectionId, requestId: "external-tool-14" });
    await sdk.flush("control");
    expect(sdk.logs.control.ofType("external_tool_call_request")).toHaveLength(0);
    expect(fixture.relay.environment(connectionId)?.outstandingCalls).toEqual([]);
  });

  it("unownedCallTimeoutMs: a call no session of its runtime takes is answered to the listener with an error; a session of another runtime never gets it", async () => {
    await fixture.start({ unownedCallTimeoutMs: 150 });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const stranger = await fixture.sdk(connectionId, { sessionId: "stranger", agentId: "agent-2", conversationId: "conv-2" });
    const failed = fixture.nextEvent("tool-call-failed");
    listener.sendControl(toolRequest("external-tool-18"));
    const response = await listener.logs.control.waitForType("external_tool_call_response");
    expect(response).toMatchObject({
      request_id: "external-tool-18",
      error: expect.stringContaining("no SDK session attached to this call's runtime within 150 ms"),
    });
    expect((await failed)[0].requestId).toBe("external-tool-18");
    expect(stranger.logs.control.ofType("external_tool_call_request")).toHaveLength(0);
    expect(fixture.relay.environment(connectionId)?.outstandingCalls).toEqual([]);
    expect(fixture.relay.stats().tenants[0]?.outstandingCalls).toBe(0);
  });

  it("an answer from a session that does not own the call is refused; the owner's answer still passes", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const owner = await fixture.sdk(connectionId, { sessionId: "owner", agentId: "agent-1", conversationId: "conv-1" });
    await registerTools(owner, listener, "start-1", runtime);
    const sameRuntime = await fixture.sdk(connectionId, { sessionId: "same-runtime", agentId: "agent-1", conversationId: "conv-1" });
    const otherRuntime = await fixture.sdk(connectionId, { sessionId: "other-runtime", agentId: "agent-2", conversationId: "conv-2" });
    listener.sendControl(toolRequest("external-tool-19"));
    await owner.waitFor("external_tool_call_request");
    const refusals: string[] = [];
    fixture.relay.on("refused", (refusal) => refusals.push(refusal.kind));
    sameRuntime.send(toolResponse("external-tool-19", "forged by a session of the same runtime"));
    otherRuntime.send(toolResponse("external-tool-19", "forged by a session of another runtime"));
    await sameRuntime.flush("control");
    await otherRuntime.flush("control");
    expect(refusals).toEqual(["not-call-owner", "not-call-owner"]);
    expect(listener.logs.control.ofType("external_tool_call_response")).toHaveLength(0);
    owner.send(toolResponse("external-tool-19", "genuine"));
    expect(await listener.logs.control.waitForType("external_tool_call_response")).toEqual(toolResponse("external-tool-19", "genuine"));
  });

  it("an answer for an unknown request id is dropped", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    sdk.send(toolResponse("external-tool-nobody-asked"));
    sdk.send({ type: "sync", runtime, request_id: "marker" });
    await listener.logs.control.waitForType("sync");
    expect(listener.logs.control.ofType("external_tool_call_response")).toHaveLength(0);
  });

  it("are dropped with the environment: the SDK sockets are closed with 1008", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const sdk = await fixture.sdk(connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    listener.sendControl(toolRequest("external-tool-15"));
    await sdk.waitFor("external_tool_call_request");
    const closed = waitForClose(sdk.control);
    fixture.relay.closeListener(connectionId, 1008);
    expect(await closed).toMatchObject({ code: 1008 });
    expect(fixture.relay.environment(connectionId)).toBeUndefined();
  });

  it("maxOutstandingCallsPerTenant: a call past the cap is answered to the listener with an error; calls age out after outstandingCallTtlMs", async () => {
    await fixture.start({ maxOutstandingCallsPerTenant: 2, outstandingCallTtlMs: 100 });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    for (const id of ["r-1", "r-2", "r-3"]) {
      const requested = fixture.nextEvent("tool-call-requested");
      listener.sendControl(toolRequest(id));
      await requested;
    }
    expect(fixture.relay.environment(connectionId)?.outstandingCalls).toEqual(["r-1", "r-2"]);
    const refused = await listener.logs.control.waitForType("external_tool_call_response");
    expect(refused).toMatchObject({ request_id: "r-3", error: expect.stringContaining("maxOutstandingCallsPerTenant") });
    await letTimePass(150); // on purpose: past outstandingCallTtlMs, the calls age out
    const requested = fixture.nextEvent("tool-call-requested");
    listener.sendControl(toolRequest("r-4"));
    await requested;
    expect(fixture.relay.environment(connectionId)?.outstandingCalls).toEqual(["r-4"]);
    expect(fixture.relay.stats().tenants[0]?.outstandingCalls).toBe(1);
  });
});
