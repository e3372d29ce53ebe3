import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { waitForClose, waitForOpen } from "./support/frame-log.js";
import { httpJson } from "./support/http-json.js";
import { RelayFixture, TEST_KEY } from "./support/relay-fixture.js";

const fixture = new RelayFixture();
afterEach(() => fixture.cleanup());

const auth = { authorization: `Bearer ${TEST_KEY}` };

describe("relay server", () => {
  it("closes only the socket that sent an oversized frame (1009)", async () => {
    await fixture.start({ maxSdkFrameBytes: 4096 });
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1" });
    const closed = waitForClose(sdk.control);
    sdk.send({ type: "sync", pad: "x".repeat(8192) });
    expect((await closed).code).toBe(1009);
    expect(sdk.stream.readyState).toBe(WebSocket.OPEN);
    expect(fixture.relay.environment(listener.answer.connectionId)?.listenerConnected).toBe(true);
  });

  it("terminates a socket that stops answering protocol pings, and keeps the ones that answer", async () => {
    await fixture.start({ heartbeatIntervalMs: 40 });
    const listener = await fixture.listener();
    const healthy = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1" });
    const port = fixture.relay.port;
    const silent = connect(port, "127.0.0.1");
    silent.on("error", () => {});
    silent.on("data", () => {}); // reads (so it sees the close) but never answers a ping
    const closed = new Promise<number>((resolve) => {
      const started = Date.now();
      silent.on("close", () => resolve(Date.now() - started));
    });
    silent.write(
      [
        `GET /v1/environments/${listener.answer.connectionId}/status/ws?channel=control&agentId=silent HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        `Authorization: Bearer ${TEST_KEY}`,
        "",
        "",
      ].join("\r\n"),
    );
    const elapsed = await closed; // the test's own deadline bounds this wait
    expect(elapsed).toBeLessThan(1_000);
    expect(healthy.control.readyState).toBe(WebSocket.OPEN);
    expect(listener.control?.readyState).toBe(WebSocket.OPEN);
    silent.destroy();
  });

  it("serves the opt-in test hooks over HTTP", async () => {
    await fixture.start({ enableTestHooks: true });
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const sdk = await fixture.sdk(connectionId, { agentId: "agent-1" });
    const sdkClosed = waitForClose(sdk.control);
    const dropped = await httpJson(`${fixture.relay.httpUrl}/_relay/drop-sdk-sockets`, { headers: auth, body: { connectionId } });
    expect(dropped.json).toEqual({ dropped: 2 });
    expect((await sdkClosed).code).toBe(1012);
    const listenerClosed = waitForClose(listener.control as WebSocket);
    const closed = await httpJson(`${fixture.relay.httpUrl}/_relay/close-listener`, { headers: auth, body: { connectionId, code: 4001 } });
    expect(closed.json).toEqual({ closed: true });
    expect((await listenerClosed).code).toBe(4001);
    const bad = await httpJson(`${fixture.relay.httpUrl}/_relay/close-listener`, { headers: auth, body: { connectionId, code: 1006 } });
    expect(bad.status).toBe(400);
    const listing = await httpJson(`${fixture.relay.httpUrl}/_relay/environments`, { headers: auth });
    expect((listing.json as Array<{ connectionId: string }>)[0]?.connectionId).toBe(connectionId);
  });

  it("rejects unsendable close codes from the library API", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    expect(() => fixture.relay.closeListener(listener.answer.connectionId, 1005)).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS" }),
    );
    expect(() => fixture.relay.dropSdkSockets(undefined, { code: 999 })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });

  it("dropSdkSockets with terminate cuts the connection; the session resumes with its frames", async () => {
    await fixture.start();
    const listener = await fixture.listener();
    const { connectionId } = listener.answer;
    const sdk = await fixture.sdk(connectionId, { sessionId: "s", agentId: "agent-1", conversationId: "conv-1", autoAck: false });
    listener.sendStream({ type: "stream_delta", runtime: { agent_id: "agent-1", conversation_id: "conv-1" }, event_seq: 1 });
    await sdk.waitFor("stream_delta", { channel: "stream" });
    const closed = waitForClose(sdk.stream);
    expect(fixture.relay.dropSdkSockets(connectionId, { terminate: true })).toBe(2);
    expect((await closed).code).toBe(1006);
    const url = fixture.relay.statusUrl(connectionId, { channel: "stream", sessionId: "s" });
    expect(url).not.toContain(TEST_KEY);
    const again = new WebSocket(url, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    again.on("error", () => {});
    const first = new Promise<Record<string, unknown>>((resolve) => again.once("message", (data) => resolve(JSON.parse(data.toString()))));
    await waitForOpen(again);
    expect(await first).toMatchObject({ type: "stream_delta", seq: 1 });
    again.terminate();
  });

  it("close() is idempotent and leaves no open sockets", async () => {
    const relay = await fixture.start();
    const listener = await fixture.listener();
    const sdk = await fixture.sdk(listener.answer.connectionId, { agentId: "agent-1" });
    await Promise.all([relay.close(), relay.close()]);
    expect(sdk.control.readyState).toBeGreaterThanOrEqual(WebSocket.CLOSING);
    await expect(httpJson(`${relay.httpUrl}/healthz`)).rejects.toThrow();
  });
});
