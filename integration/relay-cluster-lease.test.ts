/**
 * Issue 27: the environment lease of the relay cluster (packages/relay/src/cluster/environment-leases.ts)
 * against a real NATS JetStream server — one holder at a time, renewals keep it, a holder that stops
 * renewing loses it to another node after the TTL, and a holder whose clock says its lease ran out
 * (it was frozen) stops acting at once and cannot write over the new holder's lease.
 */
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvironmentLeases } from "../packages/relay/src/cluster/environment-leases.js";
import { silentRelayLogger, startRelay } from "../packages/relay/src/index.js";
import { FakeListener } from "../test/relay/support/fake-listener.js";
import { systemTimers, type TimerHandle, type Timers } from "../packages/toolrelay/src/protocol/index.js";
import { startNatsServers, type NatsServers } from "./support/nats-servers.js";

const TTL_MS = 1_200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Real timers whose clock can jump ahead (a process that was frozen) and whose timers can be held back (it does not run). */
class FreezableTimers implements Timers {
  offsetMs = 0;
  frozen = false;
  #held: Array<() => void> = [];
  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    return systemTimers.setTimeout(() => {
      if (this.frozen) this.#held.push(callback);
      else callback();
    }, delayMs);
  }
  clearTimeout(handle: TimerHandle): void {
    systemTimers.clearTimeout(handle);
  }
  now(): number {
    return systemTimers.now() + this.offsetMs;
  }
  /** Wakes up (SIGCONT): real time went on meanwhile, and the timers that came due run now, late. */
  wake(): void {
    this.frozen = false;
    for (const callback of this.#held.splice(0)) callback();
  }
}

describe("the environment lease on a real JetStream key-value bucket", () => {
  let nats: NatsServers;
  let connection: NatsConnection;
  let kv: KV;
  const leasesToStop: EnvironmentLeases[] = [];
  beforeAll(async () => {
    nats = await startNatsServers({ count: 1 });
    connection = await connect({ servers: nats.urls });
    kv = await new Kvm(connection).create("lease_test", { history: 1, ttl: TTL_MS });
  }, 60_000);
  afterAll(async () => {
    for (const leases of leasesToStop) await leases.releaseAll();
    await connection?.close();
    await nats?.stop();
  });

  function node(nodeId: string, timers: Timers = systemTimers, lost: string[] = []): EnvironmentLeases {
    const leases = new EnvironmentLeases({
      kv,
      nodeId,
      address: `127.0.0.1:${nodeId.length}`,
      ttlMs: TTL_MS,
      timers,
      logger: silentRelayLogger,
      onLost: (connectionId) => lost.push(connectionId),
    });
    leasesToStop.push(leases);
    return leases;
  }

  it("one holder at a time; renewals keep it past several TTLs; a release hands it over at once", async () => {
    const a = node("a");
    const b = node("b");
    expect(await a.acquire("env-1")).toBe(true);
    expect(await b.acquire("env-1")).toBe(false);
    expect(await b.holder("env-1")).toMatchObject({ nodeId: "a" });
    await sleep(TTL_MS * 3);
    expect(a.held("env-1"), "a still holds it after 3 TTLs of renewals").toBe(true);
    expect(await b.acquire("env-1"), "b cannot take it meanwhile").toBe(false);
    await a.release("env-1");
    expect(a.held("env-1")).toBe(false);
    expect(await b.acquire("env-1"), "b takes it at once after the release (even with a renewal on its way)").toBe(true);
    expect(await a.holder("env-1")).toMatchObject({ nodeId: "b" });
  }, 30_000);

  it("a release while a renewal is on its way still frees the key (the release waits for the renewal's revision)", async () => {
    const a = node("a4");
    const b = node("b4");
    for (let round = 0; round < 5; round++) {
      const connectionId = `env-4-${round}`;
      expect(await a.acquire(connectionId)).toBe(true);
      a.setListener(connectionId, true, Date.now()); // a renewal goes out now…
      await a.release(connectionId); // …and the release comes right behind it
      expect(await b.acquire(connectionId), `round ${round}: b takes the released key`).toBe(true);
      await b.release(connectionId);
    }
  }, 30_000);

  it("a holder that stops renewing (frozen) loses the lease: another node takes it after the TTL, and on waking the old holder acts no more and writes nothing", async () => {
    const frozenTimers = new FreezableTimers();
    const lost: string[] = [];
    const a = node("a2", frozenTimers, lost);
    const b = node("b2");
    expect(await a.acquire("env-2")).toBe(true);
    const revisionBefore = (await kv.get("env-2"))!.revision;
    frozenTimers.frozen = true; // SIGSTOP: no renewal from now on
    // b waits for the key to expire on the server, then takes it.
    const startedAt = Date.now();
    while (!(await b.acquire("env-2"))) await sleep(50);
    const takenAfterMs = Date.now() - startedAt;
    expect(takenAfterMs).toBeGreaterThanOrEqual(TTL_MS * 0.5);
    const takenRevision = (await kv.get("env-2"))!.revision;
    expect(takenRevision).toBeGreaterThan(revisionBefore);
    // SIGCONT: a's own clock says its lease ran out before anything else happens.
    expect(a.held("env-2")).toBe(false);
    frozenTimers.wake();
    a.setListener("env-2", true, Date.now()); // what a listener frame would make it write: nothing
    await sleep(TTL_MS);
    expect(lost).toEqual(["env-2"]);
    const entry = await kv.get("env-2");
    expect(entry?.json<{ nodeId: string }>().nodeId).toBe("b2");
    expect(b.held("env-2")).toBe(true);
  }, 30_000);

  it("a holder whose renewal comes after another node took the key over (compare-and-set) loses it and does not overwrite", async () => {
    const slowTimers = new FreezableTimers();
    const lost: string[] = [];
    const a = node("a3", slowTimers, lost);
    const b = node("b3");
    expect(await a.acquire("env-3")).toBe(true);
    slowTimers.frozen = true;
    while (!(await b.acquire("env-3"))) await sleep(50);
    const takenRevision = (await kv.get("env-3"))!.revision;
    // a's held renewal fires late, with a's old revision: the bucket refuses it.
    slowTimers.offsetMs = -TTL_MS; // even a clock that lags (it believes its lease is still valid) cannot write over b
    slowTimers.wake();
    await sleep(TTL_MS / 2);
    await until(() => lost.length > 0);
    expect(lost).toEqual(["env-3"]);
    const entry = await kv.get("env-3");
    expect(entry?.json<{ nodeId: string }>().nodeId).toBe("b3");
    expect(entry!.revision).toBeGreaterThanOrEqual(takenRevision);
  }, 30_000);
});

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await sleep(20);
  }
}

describe("a cluster node's close()", () => {
  it("clears every timer it set, gives its leases up, and another node takes its environment at once (no TTL wait)", async () => {
    const nats = await startNatsServers({ count: 1 });
    const pending = new Set<TimerHandle>();
    const counting: Timers = {
      setTimeout(callback, delayMs) {
        const handle: TimerHandle = systemTimers.setTimeout(() => {
          pending.delete(handle);
          callback();
        }, delayMs);
        pending.add(handle);
        return handle;
      },
      clearTimeout(handle) {
        pending.delete(handle);
        systemTimers.clearTimeout(handle);
      },
      now: () => systemTimers.now(),
    };
    const cluster = (nodeId: string, timers: Timers) =>
      startRelay({
        port: 0,
        timers,
        heartbeatIntervalMs: 0,
        cluster: { servers: nats.urls, nodeId, leaseTtlMs: 10_000, name: "close_test" },
      });
    const first = await cluster("c1", counting);
    const second = await cluster("c2", systemTimers);
    try {
      const listener = await FakeListener.start(first.httpUrl, undefined, { connectionName: "close-test" });
      const { connectionId } = listener.answer;
      expect(first.environment(connectionId)?.listenerConnected).toBe(true);
      await sleep(500);
      expect(pending.size).toBeGreaterThan(0); // lease renewals, the usage refresh
      await first.close();
      expect(pending.size).toBe(0);
      // Its lease was given up: the listener's reconnect is taken by the other node at once, not after the 10 s TTL.
      const startedAt = Date.now();
      listener.answer = { ...listener.answer, wsUrl: listener.answer.wsUrl.replace(first.url, second.url) };
      await listener.connect();
      expect(second.environment(connectionId)?.listenerConnected).toBe(true);
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      listener.terminate();
    } finally {
      await first.close();
      await second.close();
      await nats.stop();
    }
  }, 60_000);
});
