/**
 * The relay cluster's lean key-value writer (packages/relay/src/cluster/kv-writer.ts) against a
 * REAL nats-server: what it writes is what the official client reads; a create that finds the key
 * says so and writes nothing; a thousand writes in flight all settle; and every way a write can
 * fail — no stream for the bucket, an answer that is not a JetStream acknowledgement, a frozen
 * server, a writer closed with writes waiting — rejects with a `KvWriteError` and loses nothing else.
 */
import { type KV, Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { KvWriteError, KvWriter } from "../packages/relay/src/cluster/kv-writer.js";
import { systemTimers } from "../packages/toolrelay/src/protocol/index.js";
import { type NatsServers, startNatsServers } from "./support/nats-servers.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function started(): Promise<NatsServers> {
  const nats = await startNatsServers({ count: 1 });
  cleanups.push(() => nats.stop());
  return nats;
}

async function connected(nats: NatsServers): Promise<NatsConnection> {
  const connection = await connect({ servers: nats.urls, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  cleanups.push(() => connection.close());
  return connection;
}

function writer(connection: NatsConnection, bucket: string, timeoutMs?: number): KvWriter {
  const made = new KvWriter(connection, bucket, { timers: systemTimers, timeoutMs });
  cleanups.push(async () => made.close());
  return made;
}

const bytes = (text: string) => new TextEncoder().encode(text);

async function bucket(connection: NatsConnection, name: string): Promise<KV> {
  return new Kvm(connection).create(name, { history: 1 });
}

describe("KvWriter (real nats-server)", () => {
  it("create writes once and then says 'exists'; put replaces; delete leaves the official client's delete marker", async () => {
    const nats = await started();
    const connection = await connected(nats);
    const kv = await bucket(connection, "kvw");
    const writes = writer(connection, "kvw");

    expect(await writes.create("env.a", bytes("first"))).toBe("written");
    expect(await writes.create("env.a", bytes("second"))).toBe("exists");
    expect((await kv.get("env.a"))?.string()).toBe("first");

    await writes.put("env.a", bytes("answered"));
    expect((await kv.get("env.a"))?.string()).toBe("answered");

    await writes.delete("env.a");
    expect((await kv.get("env.a"))?.operation).toBe("DEL");
    const keys: string[] = [];
    for await (const key of await kv.keys("env.>")) keys.push(key);
    expect(keys).toEqual([]);
    // A delete marker is a value of the key: create reports it (the call journal then puts).
    expect(await writes.create("env.a", bytes("again"))).toBe("exists");
  });

  it("a thousand writes in flight at once all settle, each as the official client reads it", async () => {
    const nats = await started();
    const connection = await connected(nats);
    const kv = await bucket(connection, "kvw");
    const writes = writer(connection, "kvw");

    const outcomes = await Promise.all(Array.from({ length: 1_000 }, (_, index) => writes.create(`k.${index}`, bytes(String(index)))));
    expect(outcomes.every((outcome) => outcome === "written")).toBe(true);
    const again = await Promise.all(Array.from({ length: 1_000 }, (_, index) => writes.create(`k.${index}`, bytes("x"))));
    expect(again.every((outcome) => outcome === "exists")).toBe(true);
    for (const index of [0, 499, 999]) expect((await kv.get(`k.${index}`))?.string()).toBe(String(index));
    expect((await kv.status()).values).toBe(1_000);
  });

  it("no stream holds the bucket: the write rejects with a clear KvWriteError", async () => {
    const nats = await started();
    const connection = await connected(nats);
    const writes = writer(connection, "no_such_bucket");

    const failure = await writes.put("k", bytes("v")).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(KvWriteError);
    expect(String(failure)).toMatch(/no JetStream stream answers for the bucket/);
  });

  it("an answer that is not a JetStream acknowledgement rejects that write only", async () => {
    const nats = await started();
    const connection = await connected(nats);
    const writes = writer(connection, "impostor");
    // Nothing stores `$KV.impostor.>`: this subscriber is the only one to answer, with garbage.
    const impostor = await connected(nats);
    const answers = ["not json", "[1,2]", '{"stream":"KV_impostor"}', '{"error":{"code":503,"err_code":10077,"description":"nope"}}'];
    let next = 0;
    impostor.subscribe("$KV.impostor.>", { callback: (_error, message) => void message.respond(bytes(answers[next++] ?? "")) });
    await impostor.flush();

    const failures = [];
    for (let index = 0; index < answers.length; index++)
      failures.push(await writes.put(`k${index}`, bytes("v")).catch((error: unknown) => error));
    expect(
      failures.map((failure) => (failure instanceof KvWriteError ? failure.message : `not a KvWriteError: ${String(failure)}`)),
    ).toEqual([
      "an acknowledgement that is not JSON",
      "an acknowledgement that is not a JSON object",
      "an acknowledgement without a stream sequence",
      "nope",
    ]);
    expect((failures[3] as KvWriteError).jetStreamCode).toBe(10077);
  });

  it("a frozen server: writes time out (rejected, not hung); its late acknowledgements are ignored and the writer goes on", async () => {
    const nats = await started();
    const connection = await connected(nats);
    const kv = await bucket(connection, "kvw");
    const writes = writer(connection, "kvw", 300);
    const server = nats.servers[0]!;

    process.kill(server.pid, "SIGSTOP");
    let frozen = true;
    cleanups.push(async () => {
      if (frozen) process.kill(server.pid, "SIGCONT");
    });
    const frozenAt = Date.now();
    const stuck = await Promise.all(
      [writes.create("late.1", bytes("1")), writes.put("late.2", bytes("2"))].map((write) => write.catch((error: unknown) => error)),
    );
    expect(Date.now() - frozenAt).toBeLessThan(3_000);
    for (const failure of stuck) expect(String(failure)).toMatch(/did not acknowledge the write within 300 ms/);

    process.kill(server.pid, "SIGCONT");
    frozen = false;
    // The timed-out writes may still land (they were sent); what matters is that the writer goes on.
    expect(await writes.create("after", bytes("ok"))).toBe("written");
    expect((await kv.get("after"))?.string()).toBe("ok");
  });

  it("close() rejects the writes still waiting and refuses later ones", async () => {
    const nats = await started();
    const connection = await connected(nats);
    await bucket(connection, "kvw");
    const writes = writer(connection, "kvw");
    const server = nats.servers[0]!;

    process.kill(server.pid, "SIGSTOP");
    cleanups.push(async () => process.kill(server.pid, "SIGCONT"));
    const waiting = writes.put("k", bytes("v")).catch((error: unknown) => error);
    writes.close();
    expect(String(await waiting)).toMatch(/closed before the stream acknowledged/);
    await expect(writes.delete("k")).rejects.toThrow(/the key-value writer is closed/);
  });
});
