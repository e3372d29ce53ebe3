import { afterEach, describe, expect, it } from "vitest";
import { isToolrelayError, type ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { CloudLink, type CloudLinkOptions } from "../../packages/toolrelay/src/transport/cloud-link.js";
import type { LinkState } from "../../packages/toolrelay/src/transport/runtime-link.js";
import { FakeStatusRelay, ManualTimers, letTimePass, waitFor, type FakeRelayOptions } from "./cloud-fake-relay.js";

const relays: FakeStatusRelay[] = [];
const links: CloudLink[] = [];

afterEach(async () => {
  await Promise.all(links.splice(0).map((link) => link.close()));
  await Promise.all(relays.splice(0).map((relay) => relay.stop()));
});

async function startRelay(options: FakeRelayOptions = {}): Promise<FakeStatusRelay> {
  const relay = await FakeStatusRelay.start(options);
  relays.push(relay);
  return relay;
}

interface Recorded {
  link: CloudLink;
  log: Array<[string, unknown]>;
  frames: Array<{ type: string; envelope: unknown }>;
  errors: ToolrelayError[];
  states: LinkState[];
  reconnects: number;
}

function makeLink(relay: FakeStatusRelay, overrides: Partial<CloudLinkOptions> = {}): Recorded {
  const link = new CloudLink({
    connectionId: "conn/1",
    apiKey: "test-key",
    baseUrl: relay.baseUrl,
    runtime: { agentId: "agent-1", conversationId: "conv-1" },
    ...overrides,
  });
  links.push(link);
  const recorded: Recorded = { link, log: [], frames: [], errors: [], states: [], reconnects: 0 };
  link.on("frame", (frame, envelope) => {
    recorded.frames.push({ type: frame.type, envelope });
    recorded.log.push(["frame", frame.type]);
  });
  link.on("unknown-frame", (type) => recorded.log.push(["unknown-frame", type]));
  link.on("invalid-frame", (error) => recorded.log.push(["invalid-frame", error]));
  link.on("error", (error) => recorded.errors.push(error));
  link.on("state", (state) => recorded.states.push(state));
  link.on("reconnected", () => recorded.reconnects++);
  return recorded;
}

const queue = (extra: Record<string, unknown>) => ({ type: "update_queue", queue: [], ...extra });
const statusDelta = (extra: Record<string, unknown>) => ({
  type: "stream_delta",
  delta: { message_type: "status", id: "status-1", date: "2026-01-01T00:00:00Z", message: "working", level: "info" },
  ...extra,
});

describe("CloudLink: opening", () => {
  it("is open only when both sockets are open", async () => {
    const relay = await startRelay({ delayUpgrade: { channel: "stream", ms: 200 } });
    const { link } = makeLink(relay);
    let opened = false;
    const connecting = link.connect().then(() => {
      opened = true;
    });
    await waitFor(() => relay.sockets.some((entry) => entry.channel === "control"), 2_000, "control socket");
    await letTimePass(50); // on purpose: nothing more may happen within this window
    expect(opened).toBe(false);
    expect(link.state).toBe("connecting");
    expect(link.send({ type: "ping" })).toBe(false);
    await connecting;
    expect(link.state).toBe("open");
    expect(relay.current("stream").closed).toBe(false);
  });

  it("keeps a frame the relay sends on control before the stream socket is open, and acks it (regression: it was dropped unacked)", async () => {
    const relay = await startRelay({ delayUpgrade: { channel: "stream", ms: 150 } });
    const recorded = makeLink(relay);
    const connecting = recorded.link.connect();
    await waitFor(() => relay.sockets.some((entry) => entry.channel === "control"), 2_000, "control socket");
    const request = {
      type: "external_tool_call_request",
      seq: 7,
      request_id: "early-1",
      tool_call_id: "call-1",
      tool_name: "x",
      input: {},
    };
    relay.current("control").socket.send(JSON.stringify(request));
    await connecting;
    await waitFor(() => recorded.frames.length === 1, 2_000, "the early frame emitted");
    expect(recorded.frames[0]).toMatchObject({ type: "external_tool_call_request", envelope: { seq: 7 } });
    await waitFor(() => relay.current("control").received.some((frame) => frame.type === "ack" && frame.seq === 7), 2_000, "ack 7");
  });

  it("fails connect when one socket is refused, and closes the other", async () => {
    const relay = await startRelay({ refuse: { status: 500, channel: "stream" } });
    const { link } = makeLink(relay);
    await expect(link.connect()).rejects.toMatchObject({ code: "CONNECT_FAILED" });
    expect(link.state).toBe("closed");
    await waitFor(() => relay.sockets.length === 1 && relay.current("control").closed, 2_000, "control closed");
  });

  it("rejects with UNAUTHORIZED on a 401 and does not retry", async () => {
    const relay = await startRelay({ refuse: { status: 401 } });
    const { link } = makeLink(relay);
    await expect(link.connect()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(link.state).toBe("closed");
  });

  it("sends the Bearer header on both sockets and no token in the URL by default", async () => {
    const relay = await startRelay();
    const { link } = makeLink(relay, { headers: { "x-project-id": "project-9", Authorization: "Bearer caller-value" } });
    await link.connect();
    for (const channel of ["control", "stream"] as const) {
      const entry = relay.current(channel);
      expect(entry.url.pathname).toBe("/v1/environments/conn%2F1/status/ws");
      expect(Object.fromEntries(entry.url.searchParams)).toEqual({
        agentId: "agent-1",
        conversationId: "conv-1",
        channel,
        sessionId: expect.stringMatching(/^sdk-[0-9a-f]{16}$/),
      });
      expect(entry.headers.authorization).toBe("Bearer test-key");
      expect(entry.headers["x-project-id"]).toBe("project-9");
      expect(entry.url.toString()).not.toContain("test-key");
    }
    expect(link.connectionId).toBe("conn/1");
    expect(link.keepsPendingCallsAcrossReconnect).toBe(true);
  });

  it("puts the key in the URL only in query mode, and then sends no Authorization header", async () => {
    const relay = await startRelay();
    const { link } = makeLink(relay, { auth: "query", headers: { authorization: "Bearer caller-value" } });
    await link.connect();
    for (const channel of ["control", "stream"] as const) {
      const entry = relay.current(channel);
      expect(entry.url.searchParams.get("token")).toBe("test-key");
      expect(entry.headers.authorization).toBeUndefined();
    }
  });

  it("rejects connect() twice and a bad base URL or empty key", async () => {
    const relay = await startRelay();
    const { link } = makeLink(relay);
    await link.connect();
    await expect(link.connect()).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    expect(() => new CloudLink({ connectionId: "c", apiKey: " ", baseUrl: relay.baseUrl })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS" }),
    );
    expect(() => new CloudLink({ connectionId: "c", apiKey: "k", baseUrl: "ftp://x" })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS" }),
    );
  });
});

describe("CloudLink: envelope rules", () => {
  it("acks every seq on the socket it arrived on, duplicates included, and drops duplicate keys", async () => {
    const relay = await startRelay();
    const recorded = makeLink(relay);
    await recorded.link.connect();
    relay.send("stream", queue({ seq: 101, idempotency_key: "update_queue:1:a", event_seq: 1 }));
    relay.send("stream", queue({ seq: 102, idempotency_key: "update_queue:2:b", event_seq: 2 }));
    relay.send("stream", queue({ seq: 401, idempotency_key: "update_queue:3:c", event_seq: 3 }));
    relay.send("stream", queue({ seq: 402, idempotency_key: "update_queue:3:c", event_seq: 3 })); // relay duplicate
    relay.send("control", { type: "turn_finished", turn_id: "t", stop_reason: "end_turn", seq: 9, idempotency_key: "update_queue:3:c" });
    await waitFor(() => relay.current("control").received.length >= 1 && relay.current("stream").received.length >= 4, 2_000, "acks");
    await letTimePass(30); // on purpose: nothing more may happen within this window
    expect(relay.receivedOf("stream", "ack").map((frame) => frame.seq)).toEqual([101, 102, 401, 402]);
    expect(relay.receivedOf("control", "ack").map((frame) => frame.seq)).toEqual([9]);
    expect(recorded.frames.map((frame) => frame.envelope)).toEqual([
      { seq: 101, idempotency_key: "update_queue:1:a", event_seq: 1 },
      { seq: 102, idempotency_key: "update_queue:2:b", event_seq: 2 },
      { seq: 401, idempotency_key: "update_queue:3:c", event_seq: 3 },
    ]);
    expect(recorded.link.deliveryStats).toMatchObject({ acksSent: 5, duplicatesDropped: 2 });
  });

  it("acks then drops a stream_delta that arrives on control; the stream copy goes through", async () => {
    const relay = await startRelay();
    const recorded = makeLink(relay);
    await recorded.link.connect();
    relay.send("control", statusDelta({ seq: 7, idempotency_key: "stream_delta:1:x", event_seq: 1 }));
    relay.send("stream", statusDelta({ seq: 8, idempotency_key: "stream_delta:1:x", event_seq: 1 }));
    await waitFor(() => recorded.frames.length === 1, 2_000, "stream delta");
    await waitFor(() => relay.receivedOf("control", "ack").length === 1, 2_000, "control ack");
    expect(relay.receivedOf("control", "ack")).toEqual([{ type: "ack", seq: 7 }]);
    expect(relay.receivedOf("stream", "ack")).toEqual([{ type: "ack", seq: 8 }]);
    expect(recorded.frames[0]).toMatchObject({ type: "stream_delta", envelope: { seq: 8 } });
    expect(recorded.link.deliveryStats.controlStreamDeltasDropped).toBe(1);
  });

  it("emits frames in arrival order with unknown and invalid ones reported, pongs swallowed, never throwing", async () => {
    const relay = await startRelay();
    const recorded = makeLink(relay);
    await recorded.link.connect();
    const stream = relay.current("stream").socket;
    stream.send(JSON.stringify({ type: "brand_new_event", seq: 1 }));
    stream.send("{not json");
    stream.send(JSON.stringify(queue({ seq: 2 })));
    stream.send(Buffer.from([1, 2, 3]), { binary: true });
    stream.send(JSON.stringify({ type: "pong", seq: 3 }));
    stream.send(JSON.stringify({ type: "update_queue", queue: "wrong", seq: 4 }));
    stream.send(JSON.stringify(queue({ seq: 5 })));
    await waitFor(() => recorded.log.length >= 6, 2_000, "six events");
    await letTimePass(30); // on purpose: nothing more may happen within this window
    expect(recorded.log.map(([event, detail]) => (event === "invalid-frame" ? event : `${event}:${String(detail)}`))).toEqual([
      "unknown-frame:brand_new_event",
      "invalid-frame",
      "frame:update_queue",
      "invalid-frame",
      "invalid-frame",
      "frame:update_queue",
    ]);
    expect(relay.receivedOf("stream", "ack").map((frame) => frame.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(recorded.link.state).toBe("open");
  });

  it("survives a frame listener that throws", async () => {
    const relay = await startRelay();
    const recorded = makeLink(relay);
    recorded.link.once("frame", () => {
      throw new Error("listener bug");
    });
    await recorded.link.connect();
    relay.send("stream", queue({ seq: 1 }));
    relay.send("stream", queue({ seq: 2 }));
    await waitFor(() => recorded.frames.length === 2, 2_000, "frames after a throwing listener");
    expect(recorded.errors.map((error) => error.message).join()).toContain("listener bug");
    expect(recorded.link.state).toBe("open");
  });

  it("sends one debounced sync (recover_approvals: false) on control for a real event_seq gap during a turn (default window 1 s, debounce 250 ms)", async () => {
    const relay = await startRelay();
    const timers = new ManualTimers();
    const recorded = makeLink(relay, { timers });
    await recorded.link.connect();
    recorded.link.setTurnActive(true);
    for (const eventSeq of [1, 2, 5]) relay.send("stream", queue({ event_seq: eventSeq })); // 3 and 4 are lost
    await waitFor(() => recorded.frames.length === 3, 2_000, "frames");
    timers.advance(999);
    expect(recorded.link.deliveryStats.gapsDetected).toBe(0);
    timers.advance(1); // the hole outlived its reorder window
    expect(recorded.link.deliveryStats.gapsDetected).toBe(1);
    timers.advance(249);
    expect(recorded.link.deliveryStats.syncsSent).toBe(0);
    timers.advance(1);
    await waitFor(() => relay.receivedOf("control", "sync").length === 1, 2_000, "sync");
    expect(relay.receivedOf("control", "sync")).toEqual([
      { type: "sync", runtime: { agent_id: "agent-1", conversation_id: "conv-1" }, recover_approvals: false, force_device_status: true },
    ]);
    for (const eventSeq of [7, 9]) relay.send("stream", queue({ event_seq: eventSeq })); // more loss, inside the 5 s min interval
    await waitFor(() => recorded.frames.length === 5, 2_000, "more frames");
    timers.advance(4_000);
    await letTimePass(50); // on purpose: nothing more may happen within this window
    expect(recorded.link.deliveryStats).toMatchObject({ gapsDetected: 2, syncsSent: 1 });
    timers.advance(1_000); // 5 s after the first sync
    await waitFor(() => relay.receivedOf("control", "sync").length === 2, 2_000, "second sync");
    expect(relay.receivedOf("stream", "sync")).toEqual([]);
  });

  it("an idle link sends no gap sync; during a turn, holes that never fill are synced ever more rarely", async () => {
    const relay = await startRelay();
    const timers = new ManualTimers();
    const recorded = makeLink(relay, { timers, pingIntervalMs: 0 });
    await recorded.link.connect();
    // Idle, behind a relay that filters by runtime: every other event_seq belongs to someone else.
    let eventSeq = 1;
    const holeEvery = async (seconds: number) => {
      for (let second = 0; second < seconds; second++) {
        relay.send("stream", queue({ event_seq: eventSeq }));
        eventSeq += 2;
        await waitFor(() => recorded.frames.length === (eventSeq - 1) / 2, 2_000, "frame");
        timers.advance(1_000);
      }
    };
    await holeEvery(30);
    expect(recorded.link.deliveryStats.gapsDetected).toBeGreaterThan(20);
    expect(relay.receivedOf("control", "sync")).toEqual([]);
    // A turn starts: the same holes now ask for syncs, backed off 5, 10, 20, 40 s …
    recorded.link.setTurnActive(true);
    await holeEvery(80);
    const syncs = relay.receivedOf("control", "sync").length;
    expect(syncs).toBeGreaterThanOrEqual(3);
    expect(syncs).toBeLessThanOrEqual(5); // not one per 5 s (16)
    recorded.link.setTurnActive(false);
    await holeEvery(30);
    expect(relay.receivedOf("control", "sync")).toHaveLength(syncs);
  });

  it("does not mistake interleaving of control and stream for loss", async () => {
    const relay = await startRelay();
    const timers = new ManualTimers();
    const recorded = makeLink(relay, { timers });
    await recorded.link.connect();
    relay.send("stream", queue({ event_seq: 1 }));
    relay.send("stream", queue({ event_seq: 3 }));
    relay.send("stream", queue({ event_seq: 4 }));
    await waitFor(() => recorded.frames.length === 3, 2_000, "stream frames");
    timers.advance(500);
    relay.send("control", { type: "turn_finished", turn_id: "t", stop_reason: "end_turn", event_seq: 2 });
    relay.send("stream", queue({ event_seq: 6 }));
    await waitFor(() => recorded.frames.length === 5, 2_000, "five frames");
    timers.advance(499); // 999 ms after the first hole was noticed
    relay.send("control", { type: "turn_finished", turn_id: "u", stop_reason: "end_turn", event_seq: 5 });
    await waitFor(() => recorded.frames.length === 6, 2_000, "six frames");
    timers.advance(60_000);
    await letTimePass(50); // on purpose: nothing more may happen within this window
    expect(relay.receivedOf("control", "sync")).toEqual([]);
    expect(recorded.link.deliveryStats.gapsDetected).toBe(0);
  });

  it("resets the watermark on reconnect (the session's own sync covers the drop)", async () => {
    const relay = await startRelay();
    const timers = new ManualTimers();
    const recorded = makeLink(relay, { timers });
    await recorded.link.connect();
    relay.send("stream", queue({ event_seq: 1 }));
    relay.send("stream", queue({ event_seq: 3 }));
    await waitFor(() => recorded.frames.length === 2, 2_000, "frames");
    relay.current("stream").socket.terminate();
    await waitFor(() => recorded.link.state === "reconnecting", 2_000, "reconnecting");
    timers.advance(50);
    await waitFor(() => recorded.reconnects === 1, 2_000, "reconnected");
    relay.send("stream", queue({ event_seq: 40 }));
    await waitFor(() => recorded.frames.length === 3, 2_000, "frame after reconnect");
    timers.advance(60_000);
    await letTimePass(50); // on purpose: nothing more may happen within this window
    expect(recorded.link.deliveryStats.gapsDetected).toBe(0);
  });

  it("writes outbound frames on control only, and nothing before open or after close", async () => {
    const relay = await startRelay();
    const { link } = makeLink(relay);
    expect(link.send({ type: "ping" })).toBe(false);
    await link.connect();
    expect(link.send({ type: "sync", runtime: { agent_id: "agent-1", conversation_id: "conv-1" }, request_id: "r1" })).toBe(true);
    await waitFor(() => relay.receivedOf("control", "sync").length === 1, 2_000, "sync on control");
    expect(relay.current("stream").received).toEqual([]);
    await link.close();
    expect(link.send({ type: "ping" })).toBe(false);
  });
});

describe("CloudLink: drops and reconnect", () => {
  it("a dropped stream socket ends both and reconnects quickly with the same connectionId", async () => {
    const relay = await startRelay();
    const recorded = makeLink(relay);
    await recorded.link.connect();
    const firstControl = relay.current("control");
    const droppedAt = Date.now();
    relay.current("stream").socket.terminate();
    await waitFor(() => firstControl.closed, 2_000, "control closed after the stream drop");
    await waitFor(() => recorded.reconnects === 1, 2_000, "reconnected");
    const elapsed = Date.now() - droppedAt;
    expect(elapsed).toBeLessThan(1_000); // first retry ≤ 50 ms + a loopback handshake
    expect(relay.controlConnections).toBe(2);
    expect(recorded.link.state).toBe("open");
    expect(recorded.link.connectionId).toBe("conn/1");
    expect(recorded.states).toEqual(["connecting", "open", "reconnecting", "open"]);
    expect(recorded.errors.map((error) => error.code)).toEqual(["CONNECTION_CLOSED"]);
    relay.send("stream", queue({ seq: 1 })); // the new pair works
    await waitFor(() => recorded.frames.length === 1, 2_000, "frame on the new pair");
  });

  it("uses setRuntime's ids for the next connection", async () => {
    const relay = await startRelay();
    const recorded = makeLink(relay, { runtime: { agentId: "agent-1" } });
    await recorded.link.connect();
    expect(relay.current("control").url.searchParams.has("conversationId")).toBe(false);
    const sessionId = relay.current("control").url.searchParams.get("sessionId");
    recorded.link.setRuntime({ conversationId: "conv-new" });
    relay.current("control").socket.close(1001, "going away");
    await waitFor(() => recorded.reconnects === 1, 2_000, "reconnected");
    expect(Object.fromEntries(relay.current("stream").url.searchParams)).toEqual({
      agentId: "agent-1",
      conversationId: "conv-new",
      channel: "stream",
      sessionId,
    });
  });

  it("an oversize frame closes that socket (1009) and the link reconnects", async () => {
    const relay = await startRelay();
    const recorded = makeLink(relay, { maxPayload: 1_024 });
    await recorded.link.connect();
    relay.send("stream", queue({ padding: "x".repeat(4_096) }));
    await waitFor(() => recorded.reconnects === 1, 2_000, "reconnected");
    expect(recorded.errors[0]?.message).toMatch(/stream socket closed .*max payload/i);
    expect(recorded.frames).toEqual([]);
  });

  it("keeps retrying while the relay refuses, then recovers", async () => {
    const relay = await startRelay();
    const recorded = makeLink(relay, { backoff: { initialDelayMs: 10, maxDelayMs: 40 } });
    await recorded.link.connect();
    relay.options.refuse = { status: 503 };
    relay.current("control").socket.terminate();
    await waitFor(() => recorded.errors.length >= 3, 2_000, "failed attempts");
    expect(recorded.link.state).toBe("reconnecting");
    relay.options.refuse = undefined;
    await waitFor(() => recorded.reconnects === 1, 2_000, "reconnected");
    expect(recorded.errors.slice(1).every((error) => error.code === "CONNECT_FAILED")).toBe(true);
  });

  it("a refused key during reconnect closes the link for good, leaving no timer", async () => {
    const relay = await startRelay();
    const timers = new ManualTimers();
    const recorded = makeLink(relay, { timers });
    await recorded.link.connect();
    relay.options.refuse = { status: 403 };
    relay.current("stream").socket.terminate();
    await waitFor(() => recorded.link.state === "reconnecting", 2_000, "reconnecting");
    timers.advance(50);
    await waitFor(() => recorded.link.state === "closed", 2_000, "closed after UNAUTHORIZED");
    expect(recorded.errors.map((error) => error.code)).toEqual(["CONNECTION_CLOSED", "UNAUTHORIZED"]);
    expect(timers.pending).toBe(0);
    timers.advance(60_000);
    await letTimePass(50); // on purpose: nothing more may happen within this window
    expect(relay.controlConnections).toBe(1);
  });

  it("with reconnect: false, a drop closes the link", async () => {
    const relay = await startRelay();
    const recorded = makeLink(relay, { reconnect: false });
    await recorded.link.connect();
    relay.current("stream").socket.terminate();
    await waitFor(() => recorded.link.state === "closed", 2_000, "closed");
    await letTimePass(100); // on purpose: nothing more may happen within this window
    expect(relay.controlConnections).toBe(1);
  });
});

describe("CloudLink: close", () => {
  it("close() is idempotent and leaves no socket or timer behind", async () => {
    const relay = await startRelay();
    const timers = new ManualTimers();
    const recorded = makeLink(relay, { timers, syncDebounceMs: 0, gapReorderWindowMs: 10 });
    await recorded.link.connect();
    relay.send("stream", queue({ event_seq: 1 }));
    relay.send("stream", queue({ event_seq: 5 })); // an open hole: a gap timer is armed
    await waitFor(() => recorded.frames.length === 2, 2_000, "frames");
    expect(timers.pending).toBeGreaterThan(0);
    const first = recorded.link.close();
    const second = recorded.link.close();
    await Promise.all([first, second]);
    await recorded.link.close();
    expect(recorded.link.state).toBe("closed");
    expect(timers.pending).toBe(0);
    await waitFor(() => relay.sockets.every((entry) => entry.closed), 2_000, "relay sees both closed");
    expect(recorded.states.filter((state) => state === "closed")).toHaveLength(1);
    timers.advance(60_000);
    await letTimePass(50); // on purpose: nothing more may happen within this window
    expect(relay.controlConnections).toBe(1);
  });

  it("close() while reconnecting stops the retry loop", async () => {
    const relay = await startRelay();
    const timers = new ManualTimers();
    const recorded = makeLink(relay, { timers });
    await recorded.link.connect();
    relay.current("stream").socket.terminate();
    await waitFor(() => recorded.link.state === "reconnecting", 2_000, "reconnecting");
    await recorded.link.close();
    expect(timers.pending).toBe(0);
    timers.advance(60_000);
    await letTimePass(50); // on purpose: nothing more may happen within this window
    expect(relay.controlConnections).toBe(1);
    expect(recorded.reconnects).toBe(0);
  });

  it("close() during connect rejects connect with ABORTED and leaves nothing open", async () => {
    const relay = await startRelay({ delayUpgrade: { channel: "stream", ms: 100 } });
    const { link } = makeLink(relay);
    const connecting = link.connect();
    await waitFor(() => relay.sockets.length === 1, 2_000, "control socket");
    await link.close();
    await expect(connecting).rejects.toMatchObject({ code: "ABORTED" });
    await waitFor(() => relay.sockets.length === 2 && relay.sockets.every((entry) => entry.closed), 2_000, "both closed");
  });
});

describe("CloudLink: secrets", () => {
  const canary = "canary-7f3a9c SECRET/+=";
  const forms = [canary, encodeURIComponent(canary), new URLSearchParams({ t: canary }).toString().slice(2)];

  function expectClean(errors: unknown[]): void {
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(isToolrelayError(error)).toBe(true);
      const text = JSON.stringify({
        message: (error as Error).message,
        details: (error as ToolrelayError).details,
        cause: String((error as Error).cause),
      });
      for (const form of forms) expect(text).not.toContain(form);
    }
  }

  it("never puts the key in an error, in header or query mode, refused, unreachable or closed with it as reason", async () => {
    const errors: unknown[] = [];
    for (const auth of ["header", "query"] as const) {
      const refusing = await startRelay({ refuse: { status: 401 } });
      const refused = makeLink(refusing, { apiKey: canary, auth });
      await refused.link.connect().catch((error: unknown) => errors.push(error));
      const failing = await startRelay({ refuse: { status: 502 } });
      const failed = makeLink(failing, { apiKey: canary, auth });
      await failed.link.connect().catch((error: unknown) => errors.push(error));
      const unreachable = new CloudLink({ connectionId: "c1", apiKey: canary, auth, baseUrl: "http://127.0.0.1:1" });
      links.push(unreachable);
      await unreachable.connect().catch((error: unknown) => errors.push(error));

      const relay = await startRelay();
      const recorded = makeLink(relay, { apiKey: canary, auth, reconnect: false });
      await recorded.link.connect();
      relay.current("stream").socket.close(4000, `bad token ${canary}`.slice(0, 120));
      await waitFor(() => recorded.errors.length > 0, 2_000, "close error");
      errors.push(...recorded.errors);
    }
    expect(errors.map((error) => (error as ToolrelayError).code).sort()).toEqual(
      [
        "CONNECTION_CLOSED",
        "CONNECTION_CLOSED",
        "CONNECT_FAILED",
        "CONNECT_FAILED",
        "CONNECT_FAILED",
        "CONNECT_FAILED",
        "UNAUTHORIZED",
        "UNAUTHORIZED",
      ].sort(),
    );
    expectClean(errors);
  });
});
