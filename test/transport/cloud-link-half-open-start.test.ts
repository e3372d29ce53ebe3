/**
 * Liveness from the first byte of every cloud connection (issue 23, finding 4). A cloud link
 * (manual clock) ⇄ a one-way-capable TCP proxy ⇄ the reference relay (real sockets) ⇄ a listener
 * of raw sockets. Right after both sockets open — before any ping was sent, so before any pong —
 * the path dies: both ways, relay → SDK only, or SDK → relay only while the relay keeps sending.
 * The link must call it dead exactly `pingIntervalMs + pongTimeoutMs` (30 s) after it opened,
 * not a millisecond before, and reconnect on a new epoch.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { startRelay, type Relay } from "../../packages/relay/src/index.js";
import { CloudLink } from "../../packages/toolrelay/src/transport/cloud-link.js";
import { FakeListener } from "../relay/support/fake-listener.js";
import { letTimePass, until } from "../support/wait.js";
import { ManualTimers } from "./cloud-fake-relay.js";
import { startHalfOpenProxy, type HalfOpenProxy, type ProxyDirection } from "./half-open-proxy.js";

const KEY = "half-open-start-key";

const cleanups: Array<() => Promise<unknown> | undefined> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  // No relay heartbeat: the relay would otherwise find the dead path itself and close; this is about the SDK's own verdict.
  const relay: Relay = await startRelay({ apiKeys: [KEY], heartbeatIntervalMs: 0 });
  cleanups.push(() => relay.close());
  const listener = await FakeListener.start(relay.httpUrl, KEY, { mode: "split" });
  cleanups.push(async () => listener.terminate());
  const proxy: HalfOpenProxy = await startHalfOpenProxy({ host: "127.0.0.1", port: Number(new URL(relay.httpUrl).port) });
  cleanups.push(() => proxy.close());
  const timers = new ManualTimers();
  const link = new CloudLink({
    connectionId: listener.answer.connectionId,
    apiKey: KEY,
    baseUrl: `http://127.0.0.1:${proxy.port}`,
    timers,
  });
  cleanups.push(() => {
    const closing = link.close();
    timers.advance(1_000); // the close handshake's deadline: on a dead path nothing answers it
    return closing;
  });
  const errors: ToolrelayError[] = [];
  const unknownFrames: string[] = [];
  let reconnects = 0;
  link.on("error", (error) => errors.push(error));
  link.on("unknown-frame", (type) => unknownFrames.push(type));
  link.on("reconnected", () => reconnects++);
  return { relay, listener, proxy, timers, link, errors, unknownFrames, reconnects: () => reconnects };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The listener sends a frame every SDK session of the environment gets (on `channel`); resolves once the link read it. */
async function relayTraffic({ listener, unknownFrames }: Setup, channel: "control" | "stream" = "control"): Promise<void> {
  const before = unknownFrames.length;
  const frame = { type: "listener_note_for_test" };
  if (channel === "control") listener.sendControl(frame);
  else listener.sendStream(frame);
  await until(() => unknownFrames.length > before, `the relay's frame reached the link's ${channel} socket`, 2_000);
}

async function relayTrafficOnBoth(context: Setup): Promise<void> {
  await relayTraffic(context, "control");
  await relayTraffic(context, "stream");
}

const cases: Array<{ name: string; dead: ProxyDirection[]; relayKeepsSending: boolean }> = [
  { name: "both directions", dead: ["to-target", "to-client"], relayKeepsSending: false },
  { name: "relay → SDK only", dead: ["to-client"], relayKeepsSending: false },
  { name: "SDK → relay only, while the relay keeps sending frames", dead: ["to-target"], relayKeepsSending: true },
];

describe("a cloud link half-open before its first pong (manual clock, real sockets)", () => {
  for (const { name, dead, relayKeepsSending } of cases) {
    it(`dead ${name}: detected exactly 30 s after the sockets opened, then reconnected on epoch 2`, async () => {
      const context = await setup();
      const { link, proxy, timers, errors } = context;
      await link.connect(); // t = 0; no ping has gone out yet (the first is due at 10 s)
      expect(link.epoch).toBe(1);
      expect(proxy.kill(dead)).toBe(2); // both status sockets
      if (dead.includes("to-client")) {
        // Nothing the relay sends arrives any more.
      } else await relayTrafficOnBoth(context); // the relay → SDK direction still works

      for (let t = 5_000; t < 30_000; t += 5_000) {
        timers.advance(5_000);
        if (relayKeepsSending) await relayTrafficOnBoth(context); // traffic from the relay is no proof that the relay hears us
      }
      timers.advance(4_999); // t = 29_999
      await letTimePass(20); // on purpose: 1 ms before the bound the link must still be open
      expect(link.state).toBe("open");
      expect(errors).toEqual([]);

      timers.advance(1); // t = 30_000 = pingIntervalMs + pongTimeoutMs after the sockets opened
      expect(link.state).toBe("reconnecting");
      expect(errors.at(-1)?.code).toBe("CONNECTION_CLOSED");
      expect(errors.at(-1)?.message).toMatch(/socket for 30000 ms.*half-open/);

      timers.advance(100); // the first retry is due within 50 ms; new connections pass the proxy
      await until(() => context.reconnects() === 1, "reconnected", 5_000);
      expect(link.state).toBe("open");
      expect(link.epoch).toBe(2);
      expect(proxy.accepted).toBe(4);
    });
  }

  it("dead SDK → relay after the first pong, while the relay keeps sending: detected within 30 s of the last pong", async () => {
    const context = await setup();
    const { link, proxy, timers, errors } = context;
    await link.connect();
    const before = proxy.delivered["to-client"];
    timers.advance(10_000); // t = 10 s: the first pings; both sockets answer
    // A protocol pong (2 bytes) and a JSON pong (17 bytes) per socket, passed on to the SDK ...
    await until(() => proxy.delivered["to-client"] - before >= 2 * (2 + 17), "both sockets' pongs passed the proxy", 2_000);
    // ... and read: a frame the relay writes after them on the same socket arrived (TCP keeps the order).
    await relayTraffic(context, "control");
    await relayTraffic(context, "stream");
    expect(proxy.kill(["to-target"])).toBe(2);
    for (let t = 15_000; t < 40_000; t += 5_000) {
      timers.advance(5_000);
      await relayTrafficOnBoth(context);
    }
    timers.advance(4_999); // t = 39_999
    await letTimePass(20); // on purpose: before the bound the link is still open
    expect(link.state).toBe("open");
    timers.advance(1); // t = 40_000: the ping at 20 s was never answered
    expect(link.state).toBe("reconnecting");
    expect(errors.at(-1)?.message).toMatch(/socket for 30000 ms.*half-open/);
    timers.advance(100);
    await until(() => context.reconnects() === 1, "reconnected", 5_000);
    expect(link.epoch).toBe(2);
  });
});
