/**
 * The nats-server harness the relay cluster's tests stand on: one real JetStream server with a KV
 * bucket, and a real 3-node cluster that survives losing its meta leader or the leader of a bucket's stream.
 */
import { existsSync } from "node:fs";
import { jetstream } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { type NatsServers, startNatsServers } from "./support/nats-servers.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function started(count: 1 | 3): Promise<NatsServers> {
  const nats = await startNatsServers({ count });
  cleanups.push(() => nats.stop());
  return nats;
}

async function connected(servers: string[]): Promise<NatsConnection> {
  const connection = await connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  cleanups.push(() => connection.close());
  return connection;
}

/** Whether one `put` goes through now (a put to a stream without a leader fails or times out). */
async function putWorks(kv: KV, key: string, value: string): Promise<boolean> {
  try {
    await kv.put(key, value);
    return true;
  } catch {
    return false;
  }
}

describe("nats-servers", () => {
  it("one server: a KV bucket whose create() takes a key once; stop() removes the store", async () => {
    const nats = await started(1);
    const [server] = nats.servers;
    expect(nats.urls).toEqual([server!.url]);
    expect(server!.pid).toBeGreaterThan(0);

    const kv = await new Kvm(await connected(nats.urls)).create("t", { history: 1 });
    await kv.create("key", "first");
    await expect(kv.create("key", "second")).rejects.toThrow();
    expect((await kv.get("key"))?.string()).toBe("first");
    expect(await nats.metaLeader()).toBe(server);
    expect(await nats.streamLeader("KV_t")).toBe(server);

    expect(existsSync(server!.storeDir)).toBe(true);
    await nats.stop();
    expect(existsSync(server!.storeDir)).toBe(false);
  });

  it("three servers: an R3 bucket takes a put through another server after the meta leader is killed, and the leader rejoins", async () => {
    const nats = await started(3);
    const leader = await nats.metaLeader();
    expect(nats.servers).toContain(leader);

    const connection = await connected(nats.urls);
    const kv = await new Kvm(jetstream(connection, { timeout: 2_000 })).create("r3", { history: 1, replicas: 3 });
    await kv.put("key", "before");
    expect(nats.servers).toContain(await nats.streamLeader("KV_r3"));

    await leader.kill("SIGKILL");
    await expect.poll(() => putWorks(kv, "key", "after"), { timeout: 10_000, interval: 100 }).toBe(true);
    const newLeader = await nats.metaLeader();
    expect(newLeader).not.toBe(leader);

    const oldPid = leader.pid;
    await leader.restart();
    expect(leader.pid).not.toBe(oldPid);
    const throughRejoined = await connected([leader.url]);
    const rejoined = await new Kvm(throughRejoined).open("r3");
    await expect.poll(async () => (await rejoined.get("key").catch(() => null))?.string(), { timeout: 10_000 }).toBe("after");
  });

  it("three servers: an R3 bucket takes a put again after its stream leader is killed (a Raft follower waits 4-9 s before it campaigns)", async () => {
    const nats = await started(3);
    const connection = await connected(nats.urls);
    const kv = await new Kvm(jetstream(connection, { timeout: 2_000 })).create("r3", { history: 1, replicas: 3 });
    await kv.put("key", "before");
    const streamLeader = await nats.streamLeader("KV_r3");

    await streamLeader.kill("SIGKILL");
    await expect.poll(() => putWorks(kv, "key", "after"), { timeout: 20_000, interval: 100 }).toBe(true);
    expect(await nats.streamLeader("KV_r3")).not.toBe(streamLeader);
    expect((await kv.get("key"))?.string()).toBe("after");
  });
});
