import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { FakeListener, registerListener } from "./support/fake-listener.js";
import { waitForClose, waitForOpen } from "./support/frame-log.js";
import { httpJson } from "./support/http-json.js";
import { letTimePass, RelayFixture, TEST_KEY } from "./support/relay-fixture.js";

const fixture = new RelayFixture();
afterEach(() => fixture.cleanup());

const runtime = { agent_id: "agent-1", conversation_id: "conv-1" };

describe("registration", () => {
  it.each([
    ["single", false, false],
    ["split", true, false],
    ["paired", true, true],
  ] as const)("answers %s mode with the matching support flags", async (listenerMode, split, paired) => {
    await fixture.start({ listenerMode });
    const { status, json } = await registerListener(fixture.relay.httpUrl, TEST_KEY, {
      deviceId: "device-a",
      listenerInstanceId: "server-1",
      connectionName: "env-a",
      metadata: {},
    });
    expect(status).toBe(200);
    expect(json).toMatchObject({ supportsSplitStatusChannels: split, supportsPairedListenerGenerations: paired });
    expect(json.connectionId).toMatch(/^env-/);
    expect(String(json.connectionId).startsWith("conn-")).toBe(false);
    expect(json.wsUrl).toBe(`${fixture.relay.url}/v1/environments/${json.connectionId}/listener/ws`);
  });

  it("keys environments on (deviceId, listenerInstanceId)", async () => {
    await fixture.start();
    const body = { deviceId: "device-a", listenerInstanceId: "server-1", connectionName: "env-a" };
    const first = await registerListener(fixture.relay.httpUrl, TEST_KEY, body);
    const again = await registerListener(fixture.relay.httpUrl, TEST_KEY, body);
    const other = await registerListener(fixture.relay.httpUrl, TEST_KEY, { ...body, listenerInstanceId: "server-2" });
    expect(again.json.connectionId).toBe(first.json.connectionId);
    expect(other.json.connectionId).not.toBe(first.json.connectionId);
    expect(fixture.relay.environments()).toHaveLength(2);
  });

  it("refuses malformed bodies with 400", async () => {
    await fixture.start();
    for (const body of [
      {},
      { deviceId: "", connectionName: "x" },
      { deviceId: "d", connectionName: 5 },
      { deviceId: "d", connectionName: "x", metadata: [] },
    ]) {
      const { status } = await registerListener(fixture.relay.httpUrl, TEST_KEY, body);
      expect(status).toBe(400);
    }
  });

  it("lists environments in the Cloud shape", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const response = await httpJson(`${fixture.relay.httpUrl}/v1/environments`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(response.status).toBe(200);
    const body = response.json as { connections: Array<Record<string, unknown>>; hasNextPage: boolean };
    expect(body.hasNextPage).toBe(false);
    expect(body.connections).toEqual([
      {
        id: expect.stringMatching(/^environment-/),
        connectionId: listener.answer.connectionId,
        deviceId: listener.deviceId,
        connectionName: "fake-env",
        connectedAt: expect.any(Number),
      },
    ]);
  });

  it("lists an environment whose listener is not connected without a connectionId (Cloud's offline shape)", async () => {
    await fixture.start();
    await registerListener(fixture.relay.httpUrl, TEST_KEY, { deviceId: "device-off", connectionName: "offline-env" });
    const response = await httpJson(`${fixture.relay.httpUrl}/v1/environments`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    const body = response.json as { connections: Array<Record<string, unknown>> };
    expect(body.connections).toEqual([expect.objectContaining({ connectionName: "offline-env", connectionId: null, connectedAt: null })]);
  });
});

describe.each(["single", "split", "paired"] as const)("listener in %s mode", (mode) => {
  it("routes stream frames to SDK stream sockets and the rest to control sockets", async () => {
    await fixture.start({ listenerMode: mode });
    const listener = await fixture.listener();
    expect(fixture.relay.environment(listener.answer.connectionId)?.listenerMode).toBe(mode);
    const sdk = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    listener.sendStream({ type: "stream_delta", runtime, event_seq: 1, delta: { message_type: "assistant_message" } });
    listener.sendStream({ type: "update_loop_status", runtime, event_seq: 2, loop_status: { status: "WAITING_ON_INPUT" } });
    listener.sendControl({ type: "turn_finished", runtime, event_seq: 3, stop_reason: "end_turn" });
    const delta = await sdk.waitFor("stream_delta", { channel: "stream" });
    await sdk.waitFor("update_loop_status", { channel: "stream" });
    const finished = await sdk.waitFor("turn_finished", { channel: "control" });
    expect(delta).toMatchObject({ seq: 1, event_seq: 1, runtime });
    expect(finished).toMatchObject({ seq: 1, event_seq: 3 });
    expect(sdk.logs.control.ofType("stream_delta")).toHaveLength(0);
    expect(sdk.logs.stream.ofType("turn_finished")).toHaveLength(0);
  });

  it("answers the listener's pings with pongs on the same socket and forwards commands to control", async () => {
    await fixture.start({ listenerMode: mode });
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    listener.sendControl({ type: "ping" });
    await listener.logs.control.waitForType("pong");
    if (listener.stream) {
      listener.sendStream({ type: "ping" });
      await listener.logs.stream.waitForType("pong");
    }
    sdk.send({ type: "sync", runtime, request_id: "sync-1", extra_field: 42 });
    const sync = await listener.logs.control.waitForType("sync");
    expect(sync).toEqual({ type: "sync", runtime, request_id: "sync-1", extra_field: 42 });
    expect(sdk.logs.control.ofType("ping")).toHaveLength(0);
    expect(sdk.logs.control.ofType("pong")).toHaveLength(0);
    if (listener.stream) expect(listener.logs.stream.ofType("sync")).toHaveLength(0);
  });

  it("reconnects on the same wsUrl after a relay close and keeps the connection id", async () => {
    await fixture.start({ listenerMode: mode });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const closed = waitForClose(listener.control as WebSocket);
    expect(fixture.relay.closeListener(connectionId, 1012)).toBe(true);
    expect((await closed).code).toBe(1012);
    await fixture.waitFor(() => fixture.relay.environment(connectionId)?.listenerConnected === false, "listener down");
    await listener.connect();
    await fixture.waitFor(() => fixture.relay.environment(connectionId)?.listenerConnected === true, "listener back");
    expect(fixture.relay.environments().map((environment) => environment.connectionId)).toEqual([connectionId]);
  });
});

describe("paired handshake", () => {
  it("refuses a stream socket whose generation does not match the control socket", async () => {
    await fixture.start({ listenerMode: "paired" });
    const listener = await fixture.listener();
    const url = new URL(listener.answer.wsUrl);
    url.searchParams.set("deviceId", listener.deviceId);
    url.searchParams.set("channel", "stream");
    url.searchParams.set("connectionGeneration", "some-other-generation");
    url.searchParams.set("connectionAttempt", "9");
    const stray = new WebSocket(url, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    stray.on("error", () => {});
    const closed = waitForClose(stray);
    expect((await closed).code).toBe(4409);
    expect(fixture.relay.environment(listener.answer.connectionId)?.listenerConnected).toBe(true);
    stray.terminate();
  });

  it("does not forward SDK commands until both paired sockets are accepted, then flushes them in order", async () => {
    await fixture.start({ listenerMode: "paired" });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const sdk = await fixture.sdk(connectionId, { agentId: "agent-1", conversationId: "conv-1" });
    fixture.relay.closeListener(connectionId, 1012);
    await fixture.waitFor(() => fixture.relay.environment(connectionId)?.listenerConnected === false, "listener down");
    const controlFrom = listener.logs.control.frames.length;
    sdk.send({ type: "sync", runtime, request_id: "queued-1" });
    sdk.send({ type: "sync", runtime, request_id: "queued-2" });
    await fixture.waitFor(() => fixture.relay.environment(connectionId)?.queuedCommands === 2, "two queued commands");
    await listener.connect();
    const first = await listener.logs.control.waitForType("sync", { from: controlFrom });
    const second = await listener.logs.control.waitForType("sync", { from: listener.logs.control.frames.indexOf(first) + 1 });
    expect([first.request_id, second.request_id]).toEqual(["queued-1", "queued-2"]);
    const readyIndex = listener.logs.control.frames.findIndex((frame, index) => index >= controlFrom && frame.type === "listener_ready");
    expect(readyIndex).toBeGreaterThanOrEqual(controlFrom);
    expect(listener.logs.control.frames.indexOf(first)).toBeGreaterThan(readyIndex);
  });
});

describe("close codes", () => {
  it("1008 removes the environment: SDK sockets get 1008, the listener registers again with a new connection id", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const oldId = listener.answer.connectionId;
    const sdk = await fixture.sdk(oldId, { agentId: "agent-1" });
    const listenerClosed = waitForClose(listener.control as WebSocket);
    const sdkClosed = waitForClose(sdk.control);
    fixture.relay.closeListener(oldId, 1008, "Environment gone");
    expect((await listenerClosed).code).toBe(1008);
    expect((await sdkClosed).code).toBe(1008);
    expect(fixture.relay.environment(oldId)).toBeUndefined();
    const answer = await listener.register();
    expect(answer.connectionId).not.toBe(oldId);
    const stale = new URL(listener.answer.wsUrl.replace(answer.connectionId, oldId));
    stale.searchParams.set("deviceId", listener.deviceId);
    const staleSocket = new WebSocket(stale, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    staleSocket.on("error", () => {});
    expect((await waitForClose(staleSocket)).code).toBe(1008);
  });

  it("an SDK socket for an unknown environment is refused with 404", async () => {
    await fixture.start();
    await expect(fixture.sdk("env-unknown", { agentId: "agent-1" })).rejects.toMatchObject({ status: 404 });
  });

  it("shutdown closes listener sockets with 1001, never 1000", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const closed = waitForClose(listener.control as WebSocket);
    await fixture.relay.close();
    expect((await closed).code).toBe(1001);
    expect(listener.closeCodes).toEqual([1001]);
  });

  it("a second registration of the same identity replaces a connected listener with 1000 'Replaced by new connection'", async () => {
    await fixture.start();
    const listener = await fixture.listener({ deviceId: "device-dup" });
    const closed = waitForClose(listener.control as WebSocket);
    const again = await registerListener(fixture.relay.httpUrl, TEST_KEY, {
      deviceId: "device-dup",
      listenerInstanceId: listener.listenerInstanceId,
      connectionName: "fake-env",
    });
    expect(again.json.connectionId).toBe(listener.answer.connectionId);
    expect(await closed).toEqual({ code: 1000, reason: "Replaced by new connection" });
  });

  it("an environment whose listener stays away past the grace period is removed (SDK sockets get 1008)", async () => {
    await fixture.start({ environmentGraceMs: 100 });
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1" });
    const sdkClosed = waitForClose(sdk.control);
    listener.closeSockets(1001);
    expect((await sdkClosed).code).toBe(1008);
    expect(fixture.relay.environments()).toEqual([]);
  });

  it("an environment survives a listener reconnect inside the grace period", async () => {
    await fixture.start({ environmentGraceMs: 300 });
    const listener = await fixture.listener();
    listener.closeSockets(1001);
    await letTimePass(100); // on purpose: the listener is away for part of the grace period
    await listener.connect();
    await letTimePass(400); // on purpose: past the grace deadline, the environment must still be there
    expect(fixture.relay.environment(listener.answer.connectionId)?.listenerConnected).toBe(true);
  });
});

describe("split mode ordering", () => {
  it("pairs a stream socket that opens before its control socket", async () => {
    await fixture.start({ listenerMode: "split" });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    listener.closeSockets(1001);
    await fixture.waitFor(() => fixture.relay.environment(connectionId)?.listenerConnected === false, "listener down");
    const url = new URL(listener.answer.wsUrl);
    url.searchParams.set("deviceId", listener.deviceId);
    const headers = { authorization: `Bearer ${TEST_KEY}` };
    url.searchParams.set("channel", "stream");
    const stream = new WebSocket(url, { headers });
    stream.on("error", () => {});
    await waitForOpen(stream);
    url.searchParams.set("channel", "control");
    const control = new WebSocket(url, { headers });
    control.on("error", () => {});
    await waitForOpen(control);
    await fixture.waitFor(() => fixture.relay.environment(connectionId)?.listenerConnected === true, "pair ready");
    stream.terminate();
    control.terminate();
  });
});

describe("FakeListener sanity", () => {
  it("uses the real register route", async () => {
    await fixture.start();
    await expect(FakeListener.start(fixture.relay.httpUrl, "wrong-key")).rejects.toThrow(/HTTP 401/);
  });
});
