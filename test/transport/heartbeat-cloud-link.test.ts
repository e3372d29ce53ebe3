import { afterEach, describe, expect, it } from "vitest";
import type { ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { CloudLink, type CloudLinkOptions } from "../../packages/toolrelay/src/transport/cloud-link.js";
import { FakeStatusRelay, ManualTimers, letTimePass, waitFor, type FakeRelayOptions } from "./cloud-fake-relay.js";

const relays: FakeStatusRelay[] = [];
const links: CloudLink[] = [];

afterEach(async () => {
  await Promise.all(links.splice(0).map((link) => link.close()));
  await Promise.all(relays.splice(0).map((relay) => relay.stop()));
});

async function setup(relayOptions: FakeRelayOptions, linkOptions: Partial<CloudLinkOptions> = {}) {
  const relay = await FakeStatusRelay.start(relayOptions);
  relays.push(relay);
  const link = new CloudLink({
    connectionId: "env-1",
    apiKey: "test-key",
    baseUrl: relay.baseUrl,
    runtime: { agentId: "agent-1", conversationId: "conv-1" },
    ...linkOptions,
  });
  links.push(link);
  const errors: ToolrelayError[] = [];
  let reconnects = 0;
  link.on("error", (error) => errors.push(error));
  link.on("reconnected", () => reconnects++);
  return { relay, link, errors, reconnects: () => reconnects };
}

describe("cloud link heartbeat (manual clock, real sockets)", () => {
  it("detects a half-open stream socket that answered before exactly pingInterval + pongTimeout (30 s) after its last traffic, then reconnects", async () => {
    const timers = new ManualTimers();
    const { relay, link, errors, reconnects } = await setup({ pongSeq: true }, { timers });
    await link.connect(); // t = 0: both sockets count as alive
    const first = { control: relay.current("control"), stream: relay.current("stream") };

    timers.advance(10_000); // t = 10 s: first ping; both answer (so both are held to the deadline from now on)
    await waitFor(() => first.control.received.filter((frame) => frame.type === "ack").length === 1, 2_000, "control pong read");
    await waitFor(() => first.stream.received.filter((frame) => frame.type === "ack").length === 1, 2_000, "stream pong read");
    relay.options.answerPings = "control"; // stream goes half-open: no JSON pong, no protocol pong
    timers.advance(10_000); // t = 20 s: the ping that stream never answers arms its 20 s deadline
    await waitFor(() => first.control.received.filter((frame) => frame.type === "ack").length === 2, 2_000, "second control pong read");
    timers.advance(10_000);
    await waitFor(() => first.control.received.filter((frame) => frame.type === "ack").length === 3, 2_000, "third control pong read");
    timers.advance(9_999); // t = 39_999
    await letTimePass(50); // on purpose: 1 ms before the deadline the link must still be open
    expect(link.state).toBe("open");
    expect(first.stream.closed || first.control.closed).toBe(false);

    timers.advance(1); // t = 40_000: 30 s after stream's last traffic
    expect(link.state).toBe("reconnecting");
    await waitFor(() => first.stream.closed && first.control.closed, 2_000, "both sockets terminated");
    expect(errors.at(-1)?.code).toBe("CONNECTION_CLOSED");
    expect(errors.at(-1)?.message).toMatch(/stream socket for 30000 ms.*half-open/);

    relay.options.answerPings = true;
    timers.advance(100); // the first retry is due within 50 ms
    await waitFor(() => reconnects() === 1, 2_000, "reconnected");
    expect(relay.controlConnections).toBe(2);
  });

  it("sends a protocol-level ping next to the JSON ping on both sockets", async () => {
    const timers = new ManualTimers();
    const { relay, link } = await setup({}, { timers });
    await link.connect();
    timers.advance(10_000);
    const sockets = [relay.current("control"), relay.current("stream")];
    await waitFor(
      () => sockets.every((socket) => socket.protocolPings === 1 && socket.received.some((frame) => frame.type === "ping")),
      2_000,
      "both pings on both sockets",
    );
  });

  it("keeps an idle link open when the relay answers protocol pings but never a JSON ping", async () => {
    const timers = new ManualTimers();
    const { relay, link, reconnects } = await setup({ answerPings: false, answerProtocolPings: true }, { timers });
    await link.connect();
    for (let tick = 1; tick <= 12; tick++) {
      timers.advance(10_000);
      await waitFor(
        () => relay.current("stream").protocolPings === tick && relay.current("control").protocolPings === tick,
        2_000,
        `ping ${tick}`,
      );
      await letTimePass(10); // on purpose: the pongs come back (nothing on the link shows that they were read)
    }
    expect(link.state).toBe("open");
    expect(reconnects()).toBe(0);
    expect(relay.controlConnections).toBe(1);
    expect(relay.receivedOf("control", "ping")).toHaveLength(12); // it kept asking; silence on JSON is not a verdict
  });

  it("holds a relay that answers no ping of any kind to the deadline from the start: it reconnects 30 s after the sockets opened", async () => {
    // Every WebSocket peer must answer a protocol ping: a relay that answers neither kind looks
    // exactly like a path that died before the first pong, which must not go unnoticed.
    const timers = new ManualTimers();
    const { relay, link, errors, reconnects } = await setup({ answerPings: false, answerProtocolPings: false }, { timers });
    await link.connect();
    timers.advance(10_000);
    await waitFor(() => relay.current("control").protocolPings === 1 && relay.current("stream").protocolPings === 1, 2_000, "ping 1");
    timers.advance(19_999); // t = 29_999
    await letTimePass(20); // on purpose: 1 ms before the deadline the link is still open
    expect(link.state).toBe("open");
    timers.advance(1); // t = 30_000
    expect(link.state).toBe("reconnecting");
    expect(errors.at(-1)?.message).toMatch(/no answer to a ping on the control socket for 30000 ms.*half-open/);
    timers.advance(100);
    await waitFor(() => reconnects() === 1, 2_000, "reconnected");
    expect(relay.controlConnections).toBe(2);
  });

  it("keeps a link whose relay answers pings open indefinitely", async () => {
    const timers = new ManualTimers();
    const { relay, link } = await setup({ pongSeq: true }, { timers });
    await link.connect();
    for (let tick = 1; tick <= 12; tick++) {
      timers.advance(10_000);
      await waitFor(() => link.deliveryStats.acksSent === tick * 2, 2_000, `pongs of ping ${tick}`);
    }
    expect(link.state).toBe("open");
    expect(relay.controlConnections).toBe(1);
    await link.close();
    expect(timers.pending).toBe(0);
  });
});

describe("cloud link heartbeat (real short timers)", () => {
  it("terminates a link whose relay stops answering within pingInterval + pongTimeout, and reconnects", async () => {
    const { relay, link, errors, reconnects } = await setup({}, { pingIntervalMs: 50, pongTimeoutMs: 100 });
    await link.connect();
    await waitFor(() => relay.current("control").received.some((frame) => frame.type === "ping"), 2_000, "first ping answered");
    await letTimePass(20); // on purpose: the first pong travels back before the relay goes silent
    relay.options.answerPings = false; // and protocol pings with it
    const stoppedAt = Date.now();
    await waitFor(() => link.state === "reconnecting", 2_000, "watchdog verdict");
    const detectedAfter = Date.now() - stoppedAt;
    expect(detectedAfter).toBeGreaterThanOrEqual(90); // the next ping within 50 ms + the 100 ms deadline (timer slack allowed below)
    expect(detectedAfter).toBeLessThan(1_000); // exact bounds are in the manual-clock test above; this one allows for a loaded machine
    expect(errors[0]?.message).toMatch(/half-open/);
    relay.options.answerPings = true;
    await waitFor(() => reconnects() === 1, 2_000, "reconnected");
    await letTimePass(400); // on purpose: answered pings keep it up for a while
    expect(reconnects()).toBe(1);
    expect(link.state).toBe("open");
  });
});
