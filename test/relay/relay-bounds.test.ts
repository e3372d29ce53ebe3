/**
 * One named test per relay bound not covered next to its feature (docs/relay.md "Bounds" lists
 * where each is tested): connection caps, the handshake deadline, tenant caps on environments
 * and sessions, the listener's command queue and write buffer, and JSON pongs.
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { registerListener } from "./support/fake-listener.js";
import { waitForClose, waitForOpen, type JsonFrame } from "./support/frame-log.js";
import { partialUpgrade, rawConnection, type RawConnection } from "./support/raw-tcp.js";
import { RawStatusClient } from "./support/raw-status-client.js";
import { letTimePass, RelayFixture, TEST_KEY } from "./support/relay-fixture.js";

const fixture = new RelayFixture();
const raws: RawConnection[] = [];
afterEach(async () => {
  for (const raw of raws.splice(0)) raw.destroy();
  await fixture.cleanup();
});

const runtime = { agent_id: "agent-1", conversation_id: "conv-1" };

async function raw(localAddress: string, send?: string): Promise<RawConnection> {
  const connection = await rawConnection(fixture.relay.port, { localAddress, send });
  raws.push(connection);
  return connection;
}

describe("connection bounds", () => {
  it("handshakeTimeoutMs: a connection that never finishes its upgrade is closed by the relay; an upgraded socket stays", async () => {
    await fixture.start({ handshakeTimeoutMs: 200 });
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { sessionId: "upgraded", agentId: "agent-1", conversationId: "conv-1" });
    const silent = await raw("127.0.0.2");
    const partial = await raw("127.0.0.2", partialUpgrade(fixture.relay.port));
    await Promise.all([silent.whenClosed, partial.whenClosed]);
    expect(fixture.relay.stats().connections.timedOut).toBe(2);
    await letTimePass(300); // on purpose: longer than the deadline again, and the upgraded sockets are not on it
    expect([sdk.control.readyState, sdk.stream.readyState]).toEqual([WebSocket.OPEN, WebSocket.OPEN]);
    expect(listener.control?.readyState).toBe(WebSocket.OPEN);
  });

  it("maxConnectionsPerAddress: one address past its cap is refused with 503 at once; other addresses are not affected", async () => {
    await fixture.start({ maxConnectionsPerAddress: 3 });
    for (let index = 0; index < 3; index++) await raw("127.0.0.2");
    const refused = await raw("127.0.0.2");
    await refused.whenClosed;
    expect(refused.received()).toMatch(/^HTTP\/1\.1 503 .*too many connections from this address/s);
    const other = await raw("127.0.0.3");
    await letTimePass(50); // on purpose: the other address's connection must stay open
    expect(other.closed).toBe(false);
    expect(fixture.relay.stats().connections).toMatchObject({ refusedPerAddress: 1, open: 4 });
  });

  it("maxConnections: at the cap the oldest unfinished handshake makes room; established sockets are never evicted", async () => {
    await fixture.start({ maxConnections: 6 });
    const listener = await fixture.listener(); // control + stream: 2 established
    const idle = [await raw("127.0.0.2"), await raw("127.0.0.3"), await raw("127.0.0.4"), await raw("127.0.0.5")]; // 6: at the cap
    const first = await fixture.sdk(listener.answer.connectionId, { sessionId: "first", agentId: "agent-1", conversationId: "conv-1" });
    await Promise.all([idle[0]!.whenClosed, idle[1]!.whenClosed]); // the two oldest handshakes made room
    expect([idle[2]!.closed, idle[3]!.closed]).toEqual([false, false]);
    expect(fixture.relay.stats().connections).toMatchObject({ evicted: 2, open: 6, handshaking: 2 });
    idle[2]!.destroy();
    idle[3]!.destroy();
    await fixture.waitFor(() => fixture.relay.stats().connections.open === 4, "the idle ones gone");
    const second = await fixture.sdk(listener.answer.connectionId, { sessionId: "second", agentId: "agent-1", conversationId: "conv-1" });
    const refused = await raw("127.0.0.6"); // 6 established: nothing to evict
    await refused.whenClosed;
    expect(refused.received()).toMatch(/^HTTP\/1\.1 503 .*connection limit/s);
    expect(fixture.relay.stats().connections).toMatchObject({ refusedTotal: 1, open: 6, handshaking: 0 });
    for (const socket of [first.control, first.stream, second.control, second.stream, listener.control, listener.stream])
      expect(socket?.readyState).toBe(WebSocket.OPEN);
  });
});

describe("tenant bounds", () => {
  it("maxEnvironmentsPerTenant: a registration past the cap gets 429 (the listener retries); re-registering a known device is not a new environment", async () => {
    await fixture.start({ maxEnvironmentsPerTenant: 1 });
    const body = { deviceId: "device-a", listenerInstanceId: "one", connectionName: "a" };
    expect((await registerListener(fixture.relay.httpUrl, TEST_KEY, body)).status).toBe(200);
    expect((await registerListener(fixture.relay.httpUrl, TEST_KEY, body)).status).toBe(200);
    const over = await registerListener(fixture.relay.httpUrl, TEST_KEY, { ...body, deviceId: "device-b" });
    expect(over).toMatchObject({ status: 429, json: { message: expect.stringContaining("maxEnvironmentsPerTenant") } });
    fixture.relay.closeListener(fixture.relay.environments()[0]!.connectionId, 1008);
    expect((await registerListener(fixture.relay.httpUrl, TEST_KEY, { ...body, deviceId: "device-b" })).status).toBe(200);
  });

  it("maxSessionsPerTenant: an SDK socket that would open a session past the cap gets 429; a closed session frees its place", async () => {
    await fixture.start({ maxSessionsPerTenant: 2, sdkResumeWindowMs: 0 });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const first = await fixture.sdk(connectionId, { sessionId: "s-1" });
    await fixture.sdk(connectionId, { sessionId: "s-2" });
    await expect(fixture.sdk(connectionId, { sessionId: "s-3" })).rejects.toMatchObject({ status: 429 });
    const resumed = new WebSocket(fixture.relay.statusUrl(connectionId, { channel: "control", sessionId: "s-1" }), {
      headers: { authorization: `Bearer ${TEST_KEY}` },
    });
    resumed.on("error", () => {});
    await waitForOpen(resumed); // a socket for an existing session is not a new session
    resumed.terminate();
    await first.close();
    await fixture.waitFor(() => fixture.relay.stats().tenants[0]!.sessions === 1, "s-1 closed");
    await fixture.sdk(connectionId, { sessionId: "s-3" });
  });
});

describe("listener bounds", () => {
  it("maxQueuedCommands / maxQueuedCommandBytes: while the listener is away, commands past the queue are refused with their response; tool answers are kept", async () => {
    await fixture.start({ maxQueuedCommands: 2, maxQueuedCommandBytes: 4 * 1024 });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const sdk = await fixture.sdk(connectionId, { sessionId: "queue", agentId: "agent-1", conversationId: "conv-1" });
    sdk.send({
      type: "runtime_start",
      request_id: "start",
      ...runtime,
      external_tools: [{ tools: [{ name: "t", description: "t", parameters: {} }] }],
    });
    await listener.logs.control.waitForType("runtime_start");
    listener.sendControl({
      type: "external_tool_call_request",
      request_id: "external-tool-q",
      runtime,
      tool_call_id: "c",
      tool_name: "t",
      input: {},
    });
    await sdk.waitFor("external_tool_call_request");
    fixture.relay.closeListener(connectionId, 1012);
    await fixture.waitFor(() => fixture.relay.environment(connectionId)?.listenerConnected === false, "listener away");
    sdk.send({ type: "sync", runtime, request_id: "q-1" });
    sdk.send({ type: "sync", runtime, request_id: "q-2" });
    sdk.send({ type: "sync", runtime, request_id: "q-3" });
    sdk.send({
      type: "input",
      runtime,
      request_id: "q-big",
      payload: { kind: "create_message", messages: [{ role: "user", content: "x".repeat(5_000) }] },
    });
    sdk.send({ type: "external_tool_call_response", request_id: "external-tool-q", result: { content: [{ type: "text", text: "kept" }] } });
    const third = await sdk.waitFor("sync_response", { where: (frame) => frame.request_id === "q-3" });
    expect(third).toMatchObject({ success: false, error: expect.stringContaining("queue is full") });
    expect(await sdk.waitFor("input_accepted")).toMatchObject({ request_id: "q-big", accepted: false });
    await sdk.flush("control");
    expect(fixture.relay.environment(connectionId)?.queuedCommands).toBe(3);
    const from = listener.logs.control.frames.length;
    await listener.connect();
    await listener.logs.control.waitForType("external_tool_call_response", { from });
    expect(listener.logs.control.frames.slice(from).map((frame) => frame.request_id ?? frame.type)).toEqual([
      "listener_ready",
      "q-1",
      "q-2",
      "external-tool-q",
    ]);
  });

  it("maxListenerBufferedBytes: a listener that stops reading holds the SDK sockets back (TCP), and every command still arrives in order", async () => {
    await fixture.start({ listenerMode: "single", maxListenerBufferedBytes: 64 * 1024 });
    const deviceId = "device-slow";
    const { json } = await registerListener(fixture.relay.httpUrl, TEST_KEY, { deviceId, connectionName: "slow" });
    const connectionId = String(json.connectionId);
    const tcp = connect({ host: "127.0.0.1", port: fixture.relay.port });
    const listener = new WebSocket(`${String(json.wsUrl)}?deviceId=${deviceId}&connectionName=slow`, {
      headers: { authorization: `Bearer ${TEST_KEY}` },
      createConnection: () => tcp,
    });
    listener.on("error", () => {});
    const received: JsonFrame[] = [];
    listener.on("message", (data) => received.push(JSON.parse(data.toString()) as JsonFrame));
    await waitForOpen(listener);
    const sdk = await RawStatusClient.connect({
      url: fixture.relay.url,
      connectionId,
      apiKey: TEST_KEY,
      sessionId: "fast",
      agentId: "agent-1",
      conversationId: "conv-1",
    });
    tcp.pause();
    const pad = "p".repeat(32 * 1024);
    const total = 400;
    for (let index = 0; index < total; index++) sdk.send({ type: "sync", runtime, request_id: `s-${index}`, pad });
    await fixture.waitFor(
      () => fixture.relay.environment(connectionId)?.listenerCongested === true,
      "the relay to notice the congestion",
      10_000,
    );
    await fixture.waitFor(() => sdk.control.bufferedAmount > 0, "backpressure to reach the SDK client", 10_000);
    tcp.resume();
    await fixture.waitFor(() => received.filter((frame) => frame.type === "sync").length === total, "every command", 20_000);
    expect(received.filter((frame) => frame.type === "sync").map((frame) => frame.request_id)).toEqual(
      Array.from({ length: total }, (_, index) => `s-${index}`),
    );
    expect(fixture.relay.environment(connectionId)?.listenerCongested).toBe(false);
    sdk.terminate();
    listener.terminate();
  });
});

describe("JSON pings", () => {
  it("respondToJsonPings: false leaves SDK JSON pings unanswered; the listener's are still answered", async () => {
    await fixture.start({ respondToJsonPings: false });
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { sessionId: "no-pong", agentId: "agent-1", conversationId: "conv-1" });
    sdk.sendOn("control", { type: "ping" });
    sdk.send({ type: "sync", runtime, request_id: "after-ping" });
    await listener.logs.control.waitForType("sync");
    listener.sendControl({ type: "sync_response", request_id: "after-ping", success: true });
    await sdk.waitFor("sync_response");
    expect(sdk.logs.control.ofType("pong")).toHaveLength(0);
    listener.sendControl({ type: "ping" });
    await listener.logs.control.waitForType("pong");
    expect((await waitForCloseOrOpen(sdk.control)).readyState).toBe(WebSocket.OPEN);
  });
});

/** The socket itself, after giving a pending close a moment to happen (on purpose: it must not come). */
async function waitForCloseOrOpen(socket: WebSocket): Promise<WebSocket> {
  await Promise.race([waitForClose(socket, 100).catch(() => undefined), letTimePass(100)]);
  return socket;
}
