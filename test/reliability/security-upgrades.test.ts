/**
 * 1,000 connections that start an upgrade and never finish it (half a request, from other
 * loopback addresses than the victim's): the relay closes every one of them by its handshake
 * deadline — those over the per-address cap at once, the others when the deadline runs out, or
 * earlier to make room under the total cap — and a victim tenant whose SDK session and listener
 * drop in the middle of it reconnects at once, while the attackers' connections are still open.
 * Prints the figures.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startRelay, type Relay, type RelayOptions } from "../../packages/relay/src/index.js";
import { FakeListener } from "../relay/support/fake-listener.js";
import { RawStatusClient } from "../relay/support/raw-status-client.js";
import { partialUpgrade, rawConnection, type RawConnection } from "../relay/support/raw-tcp.js";
import { percentiles } from "../relay/support/flood-harness.js";

const KEY = "victim-key-0123456789";
const ATTACKERS = 1_000;
const runtime = { agent_id: "agent-v", conversation_id: "conv-v" };

let relay: Relay | undefined;
const opened: RawConnection[] = [];
afterEach(async () => {
  for (const connection of opened.splice(0)) connection.destroy();
  await relay?.close();
  relay = undefined;
});

interface Scenario {
  name: string;
  options: RelayOptions;
  /** Attacker source addresses (connections spread evenly). */
  addresses: string[];
}

const scenarios: Scenario[] = [
  { name: "defaults, all from one address", options: {}, addresses: ["127.0.0.2"] },
  {
    name: "4 addresses under the per-address cap, 3 s deadline",
    options: { handshakeTimeoutMs: 3_000 },
    addresses: ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"],
  },
  {
    name: "4 addresses, total cap 300",
    options: { handshakeTimeoutMs: 3_000, maxConnections: 300 },
    addresses: ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"],
  },
];

describe(`${ATTACKERS.toLocaleString("en")} never-completing upgrades`, () => {
  it.each(scenarios)(
    "$name: all closed by the relay within the handshake deadline; the victim reconnects at once",
    async ({ options, addresses }) => {
      relay = await startRelay({ apiKeys: [KEY], ...options });
      const deadlineMs = options.handshakeTimeoutMs ?? 5_000;
      const listener = await FakeListener.start(relay.httpUrl, KEY, { deviceId: "victim-device" });
      const session = {
        url: relay.url,
        connectionId: listener.answer.connectionId,
        apiKey: KEY,
        sessionId: "victim",
        agentId: runtime.agent_id,
        conversationId: runtime.conversation_id,
      };
      let sdk = await RawStatusClient.connect(session);

      const started = performance.now();
      for (let index = 0; index < ATTACKERS; index++) {
        const address = addresses[index % addresses.length]!;
        opened.push(await rawConnection(relay.port, { localAddress: address, send: partialUpgrade(relay.port) }));
      }
      const openedMs = performance.now() - started;
      const heldWhenVictimLeft = opened.filter((connection) => !connection.closed).length;

      // The victim drops and comes back in the middle of it.
      const reconnectStarted = performance.now();
      sdk.terminate();
      listener.terminate();
      await listener.connect();
      sdk = await RawStatusClient.connect(session);
      sdk.send({ type: "sync", runtime, request_id: "victim-after" });
      await listener.logs.control.waitForType("sync", { where: (frame) => frame.request_id === "victim-after" });
      const reconnectMs = performance.now() - reconnectStarted;
      const stillHeldAfterVictim = opened.filter((connection) => !connection.closed).length;

      const closeTimes = await Promise.all(opened.map((connection) => connection.whenClosed));
      const allClosedMs = performance.now() - started;
      const stats = relay.stats().connections;
      const closed = percentiles(closeTimes);
      console.info(
        `[upgrades] ${ATTACKERS} half-upgrades from ${addresses.length} address(es) opened in ${Math.round(openedMs)} ms; ` +
          `refused at once ${stats.refusedPerAddress + stats.refusedTotal}, evicted ${stats.evicted}, closed at the ${deadlineMs} ms deadline ${stats.timedOut}; ` +
          `time to close p50 ${Math.round(closed.p50)} ms max ${Math.round(closed.max)} ms; all closed ${Math.round(allClosedMs)} ms after the first; ` +
          `victim reconnected (listener + SDK + one command) in ${Math.round(reconnectMs)} ms with ${stillHeldAfterVictim} attacker connections still open`,
      );
      expect(opened.every((connection) => connection.closed)).toBe(true);
      expect(stats.refusedPerAddress + stats.refusedTotal + stats.evicted + stats.timedOut).toBe(ATTACKERS);
      expect(closed.max).toBeLessThan(deadlineMs * 2);
      // "At once": the victim was back while attackers' connections were still held, without waiting for the deadline.
      expect(heldWhenVictimLeft).toBeGreaterThan(0);
      expect(stillHeldAfterVictim).toBeGreaterThan(0);
      expect(reconnectMs).toBeLessThan(deadlineMs);
      expect([sdk.control.readyState, listener.control?.readyState]).toEqual([WebSocket.OPEN, WebSocket.OPEN]);
      sdk.terminate();
      listener.terminate();
    },
    60_000,
  );
});
