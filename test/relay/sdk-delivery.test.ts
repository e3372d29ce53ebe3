import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { waitForClose } from "./support/frame-log.js";
import { letTimePass, RelayFixture } from "./support/relay-fixture.js";

const fixture = new RelayFixture();
afterEach(() => fixture.cleanup());

const runtime = { agent_id: "agent-1", conversation_id: "conv-1" };
const otherRuntime = { agent_id: "agent-2", conversation_id: "conv-2" };

function delta(eventSeq: number, scope = runtime): Record<string, unknown> {
  return { type: "stream_delta", runtime: scope, event_seq: eventSeq, idempotency_key: `stream_delta:${eventSeq}:x` };
}

describe("seq and acks", () => {
  it("numbers frames per socket from 1", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    for (let index = 1; index <= 3; index++) listener.sendStream(delta(index));
    listener.sendControl({ type: "turn_finished", runtime, event_seq: 4 });
    listener.sendControl({ type: "turn_finished", runtime, event_seq: 5 });
    await sdk.waitFor("stream_delta", { channel: "stream", where: (frame) => frame.event_seq === 3 });
    await sdk.waitFor("turn_finished", { where: (frame) => frame.event_seq === 5 });
    expect(sdk.seqs.stream).toEqual([1, 2, 3]);
    expect(sdk.seqs.control).toEqual([1, 2]);
  });

  it("keeps unacked frames and redelivers them, with their original seq, after a reconnect of the same session", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const first = await fixture.sdk(connectionId, { sessionId: "s-1", agentId: "agent-1", conversationId: "conv-1", autoAck: false });
    for (let index = 1; index <= 4; index++) listener.sendStream(delta(index));
    await first.waitFor("stream_delta", { channel: "stream", where: (frame) => frame.event_seq === 4 });
    first.ack("stream", 2); // cumulative: 1 and 2 are done
    await first.flush("stream");
    await fixture.terminate(first);
    listener.sendStream(delta(5)); // arrives while the session has no socket
    await letTimePass(50); // on purpose: delta 5 reaches the relay before the session is back (nothing shows it)
    const second = await fixture.sdk(connectionId, { sessionId: "s-1" });
    await second.waitFor("stream_delta", { channel: "stream", where: (frame) => frame.event_seq === 5 });
    expect(second.logs.stream.ofType("stream_delta").map((frame) => [frame.seq, frame.event_seq])).toEqual([
      [3, 3],
      [4, 4],
      [5, 5],
    ]);
    listener.sendStream(delta(6));
    await second.waitFor("stream_delta", { channel: "stream", where: (frame) => frame.event_seq === 6 });
    expect(second.seqs.stream.at(-1)).toBe(6);
  });

  it("identifies a session by agentId + conversationId when no sessionId is given", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const first = await fixture.sdk(connectionId, { agentId: "agent-1", conversationId: "conv-1", autoAck: false });
    listener.sendStream(delta(1));
    await first.waitFor("stream_delta", { channel: "stream" });
    await fixture.terminate(first);
    const stranger = await fixture.sdk(connectionId, { agentId: "agent-2", conversationId: "conv-1" });
    const again = await fixture.sdk(connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    await again.waitFor("stream_delta", { channel: "stream" });
    expect(again.seqs.stream).toEqual([1]);
    await letTimePass(50); // on purpose: nothing may reach the stranger within this window
    expect(stranger.logs.stream.frames).toHaveLength(0);
  });

  it("does not redeliver acknowledged frames, and a new session starts again at 1", async () => {
    await fixture.start({ sdkResumeWindowMs: 50 });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const first = await fixture.sdk(connectionId, { sessionId: "s-1", agentId: "agent-1", conversationId: "conv-1" });
    listener.sendStream(delta(1));
    await first.waitFor("stream_delta", { channel: "stream" });
    await first.flush("stream");
    await fixture.terminate(first);
    const resumed = await fixture.sdk(connectionId, { sessionId: "s-1" });
    await letTimePass(50); // on purpose: no redelivery may come within this window
    expect(resumed.logs.stream.frames).toHaveLength(0);
    await fixture.terminate(resumed);
    await letTimePass(200); // on purpose: past the resume window, the session is gone
    const fresh = await fixture.sdk(connectionId, { sessionId: "s-1", agentId: "agent-1", conversationId: "conv-1" });
    listener.sendStream(delta(2));
    await fresh.waitFor("stream_delta", { channel: "stream" });
    expect(fresh.seqs.stream).toEqual([1]);
  });

  it("maxUnackedBytes: a session that stops acking is closed with 4008 at its byte bound; an acking one never is", async () => {
    await fixture.start({ maxUnackedBytes: 8 * 1024 });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const silent = await fixture.sdk(connectionId, { sessionId: "silent", agentId: "agent-1", conversationId: "conv-1", autoAck: false });
    const acking = await fixture.sdk(connectionId, { sessionId: "acking", agentId: "agent-1", conversationId: "conv-1" });
    const closed = waitForClose(silent.stream);
    const pad = "x".repeat(1_000);
    for (let index = 1; index <= 40; index++) {
      listener.sendStream({ ...delta(index), pad });
      await acking.waitFor("stream_delta", { channel: "stream", where: (frame) => frame.event_seq === index });
      await acking.flush("stream"); // its ack has been processed: the acking session holds nothing
    }
    expect(await closed).toEqual({ code: 4008, reason: expect.stringContaining("Unacknowledged") });
    const received = silent.logs.stream.frames.reduce((sum, frame) => sum + JSON.stringify(frame).length, 0);
    expect(received).toBeLessThanOrEqual(8 * 1024 + 1_200);
    await acking.waitFor("stream_delta", { channel: "stream", where: (frame) => frame.event_seq === 40 });
    expect(acking.control.readyState).toBe(WebSocket.OPEN);
    await fixture.waitFor(() => fixture.relay.stats().tenants[0]!.unackedBytes < 2_048, "the cut session's bytes released");
    const again = await fixture.sdk(connectionId, { sessionId: "silent", agentId: "agent-1", conversationId: "conv-1" });
    listener.sendStream(delta(41));
    await again.waitFor("stream_delta", { channel: "stream" });
    expect(again.seqs.stream).toEqual([1]);
  });

  it("maxUnackedBytesPerTenant: past the tenant's budget its session holding the most is closed with 4008", async () => {
    await fixture.start({ maxUnackedBytes: 64 * 1024, maxUnackedBytesPerTenant: 16 * 1024 });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const hoarder = await fixture.sdk(connectionId, { sessionId: "hoarder", agentId: "agent-1", conversationId: "conv-1", autoAck: false });
    const other = await fixture.sdk(connectionId, { sessionId: "other", agentId: "agent-2", conversationId: "conv-2", autoAck: false });
    listener.sendStream({ ...delta(1, otherRuntime), pad: "y".repeat(2_000) });
    await other.waitFor("stream_delta", { channel: "stream" });
    const closed = waitForClose(hoarder.stream);
    for (let index = 2; index <= 20; index++) listener.sendStream({ ...delta(index), pad: "x".repeat(1_000) });
    expect((await closed).code).toBe(4008);
    expect(other.stream.readyState).toBe(WebSocket.OPEN);
    expect(fixture.relay.stats().tenants[0]!.unackedBytes).toBeLessThanOrEqual(16 * 1024);
  });

  it("answers SDK pings on the same socket and never forwards pings or acks to the listener", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    sdk.sendOn("control", { type: "ping" });
    sdk.sendOn("stream", { type: "ping" });
    await sdk.waitFor("pong", { channel: "control" });
    await sdk.waitFor("pong", { channel: "stream" });
    sdk.ack("control", 1);
    sdk.send({ type: "sync", runtime, request_id: "marker" });
    await listener.logs.control.waitForType("sync");
    expect(listener.logs.control.frames.map((frame) => frame.type).filter((type) => type !== "listener_ready")).toEqual(["sync"]);
    expect(sdk.logs.control.ofType("pong")[0]?.seq).toBeUndefined();
  });

  it("drops commands sent on the SDK stream socket", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    sdk.sendOn("stream", { type: "sync", runtime, request_id: "wrong-socket" });
    sdk.send({ type: "sync", runtime, request_id: "right-socket" });
    const forwarded = await listener.logs.control.waitForType("sync");
    expect(forwarded.request_id).toBe("right-socket");
    await letTimePass(30); // on purpose: the other sync may not follow within this window
    expect(listener.logs.control.ofType("sync")).toHaveLength(1);
  });
});

describe("routing", () => {
  it("sends runtime frames only to sessions subscribed to that runtime", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const one = await fixture.sdk(connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    const two = await fixture.sdk(connectionId, { agentId: "agent-2", conversationId: "conv-2" });
    listener.sendStream(delta(1, otherRuntime));
    listener.sendStream(delta(2, runtime));
    await one.waitFor("stream_delta", { channel: "stream" });
    await two.waitFor("stream_delta", { channel: "stream" });
    await letTimePass(30); // on purpose: no crossed frame may follow within this window
    expect(one.logs.stream.frames.map((frame) => frame.event_seq)).toEqual([2]);
    expect(two.logs.stream.frames.map((frame) => frame.event_seq)).toEqual([1]);
  });

  it("sends a response only to the session that sent the request, and drops one no session waits for", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const asker = await fixture.sdk(connectionId, { sessionId: "asker", agentId: "agent-1", conversationId: "conv-1" });
    const bystander = await fixture.sdk(connectionId, { sessionId: "bystander", agentId: "agent-1", conversationId: "conv-1" });
    asker.send({ type: "input", request_id: "input-1", runtime, payload: { kind: "create_message", messages: [] } });
    await listener.logs.control.waitForType("input");
    listener.sendControl({ type: "input_accepted", request_id: "input-1" });
    listener.sendControl({ type: "abort_message_response", request_id: "never-asked" });
    listener.sendControl({ type: "turn_finished", runtime, event_seq: 9 });
    await asker.waitFor("input_accepted");
    await bystander.waitFor("turn_finished");
    await asker.waitFor("turn_finished");
    expect(bystander.logs.control.ofType("input_accepted")).toHaveLength(0);
    expect(asker.logs.control.ofType("abort_message_response")).toHaveLength(0);
    expect(bystander.logs.control.ofType("abort_message_response")).toHaveLength(0);
  });

  it("subscribes a session to the runtime named in its runtime_start_response", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { sessionId: "creator" });
    sdk.send({ type: "runtime_start", request_id: "start-1", create_agent: { body: {} }, create_conversation: {} });
    await listener.logs.control.waitForType("runtime_start");
    listener.sendControl({ type: "runtime_start_response", request_id: "start-1", success: true, runtime: otherRuntime });
    await sdk.waitFor("runtime_start_response");
    listener.sendStream(delta(1, otherRuntime));
    await sdk.waitFor("stream_delta", { channel: "stream" });
  });

  it("pairs anonymous sockets (no sessionId, no agentId) by arrival, one client after the other; each binds by its runtime_start", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const first = await fixture.sdk(connectionId, {});
    const second = await fixture.sdk(connectionId, {});
    first.send({ type: "runtime_start", request_id: "first-start", ...runtime });
    second.send({ type: "runtime_start", request_id: "second-start", ...otherRuntime });
    await listener.logs.control.waitForType("runtime_start", { where: (frame) => frame.request_id === "second-start" });
    await listener.logs.control.waitForType("runtime_start", { where: (frame) => frame.request_id === "first-start" });
    listener.sendStream(delta(1, runtime));
    listener.sendStream(delta(2, otherRuntime));
    await first.waitFor("stream_delta", { channel: "stream" });
    await second.waitFor("stream_delta", { channel: "stream" });
    await first.flush("stream");
    await second.flush("stream");
    expect(first.logs.stream.ofType("stream_delta").map((frame) => frame.event_seq)).toEqual([1]);
    expect(second.logs.stream.ofType("stream_delta").map((frame) => frame.event_seq)).toEqual([2]);
  });
});
