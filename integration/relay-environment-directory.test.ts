/**
 * The relay cluster's environment directory (packages/relay/src/cluster/environment-directory.ts)
 * against a REAL nats-server: a tenant's environments are read through its own index, never by
 * reading every tenant's records; a device stays its tenant's while one of its environments is
 * left; and a removal of a device's last environment that races a registration of another
 * environment of the same device never leaves that environment with an ownerless device (which
 * another tenant could then claim) — each interleaving made to happen by holding one write of
 * the real bucket until the other side has moved.
 */
import { randomUUID } from "node:crypto";
import { type KV, Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { keyToken } from "../packages/relay/src/cluster/cluster-store.js";
import { EnvironmentDirectory, type EnvironmentRecord } from "../packages/relay/src/cluster/environment-directory.js";
import { type NatsServers, startNatsServers } from "./support/nats-servers.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function directory(): Promise<{ directory: EnvironmentDirectory; kv: KV; nats: NatsServers }> {
  const nats = await startNatsServers({ count: 1 });
  cleanups.push(() => nats.stop());
  const connection = await connect({ servers: nats.urls });
  cleanups.push(() => connection.close());
  const kv = await new Kvm(connection).create("dir_environments", { history: 1 });
  return { directory: new EnvironmentDirectory(kv), kv, nats };
}

function fresh(tenant: string, deviceId: string, listenerInstanceId: string): EnvironmentRecord {
  return {
    connectionId: `env-${randomUUID()}`,
    id: `${deviceId}/${listenerInstanceId}`,
    tenant,
    deviceId,
    listenerInstanceId,
    connectionName: "laptop",
    sandboxId: undefined,
    registeredAt: Date.now(),
  };
}

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** The real bucket, with a wait before some puts or deletes: a race between two nodes made to happen in one order. */
function gatedKv(
  kv: KV,
  gates: {
    beforePut?(key: string): Promise<void> | undefined;
    beforeDelete?(key: string): Promise<void> | undefined;
    afterDelete?(key: string): void;
  },
): KV {
  return new Proxy(kv, {
    get(target, property) {
      if (property === "put") {
        return async (key: string, ...rest: Parameters<KV["put"]> extends [string, ...infer Rest] ? Rest : never) => {
          await gates.beforePut?.(key);
          return target.put(key, ...rest);
        };
      }
      if (property === "delete") {
        return async (key: string, ...rest: Parameters<KV["delete"]> extends [string, ...infer Rest] ? Rest : never) => {
          await gates.beforeDelete?.(key);
          await target.delete(key, ...rest);
          gates.afterDelete?.(key);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The tenant the device's owner record names, or `undefined` when it has none. */
async function ownerOf(kv: KV, deviceId: string): Promise<string | undefined> {
  const entry = await kv.get(`device.${keyToken(deviceId)}`);
  return entry?.operation === "PUT" ? (entry.json() as { tenant?: string }).tenant : undefined;
}

async function registered(target: EnvironmentDirectory, record: EnvironmentRecord): Promise<EnvironmentRecord> {
  const outcome = await target.register(record);
  if (outcome.kind === "device-of-another-tenant") throw new Error(`${record.tenant} could not register ${record.deviceId}`);
  return outcome.record;
}

describe("EnvironmentDirectory (real nats-server)", () => {
  it("lists a tenant's environments through its index only: not another tenant's, not a record without an index entry", async () => {
    const { directory: target, kv } = await directory();
    const a1 = await registered(target, fresh("a", "dev-a", "1"));
    const a2 = await registered(target, fresh("a", "dev-a", "2"));
    const b1 = await registered(target, fresh("b", "dev-b", "1"));
    // A record of tenant a that no index names (written by hand): not listed.
    const stray = fresh("a", "dev-stray", "1");
    await kv.put(`conn.${stray.connectionId}`, JSON.stringify(stray));

    const ids = (records: EnvironmentRecord[]) => records.map((record) => record.connectionId).sort();
    expect(ids(await target.list("a"))).toEqual([a1.connectionId, a2.connectionId].sort());
    expect(ids(await target.list("b"))).toEqual([b1.connectionId]);
    expect(await target.list("c")).toEqual([]);

    // A record without an index entry is listed once its listener registers again.
    const strayKey = `key.${keyToken(JSON.stringify([stray.deviceId, stray.listenerInstanceId]))}`;
    await kv.put(strayKey, JSON.stringify({ connectionId: stray.connectionId }));
    await kv.put(`device.${keyToken(stray.deviceId)}`, JSON.stringify({ tenant: "a" }));
    expect(await target.register(fresh("a", stray.deviceId, "1"))).toMatchObject({
      kind: "again",
      record: { connectionId: stray.connectionId },
    });
    expect(ids(await target.list("a"))).toEqual([a1.connectionId, a2.connectionId, stray.connectionId].sort());
    await target.remove(stray);

    // Registering a known key again keeps its connection id; removing takes it out of the index.
    const again = await target.register(fresh("a", "dev-a", "1"));
    expect(again).toMatchObject({ kind: "again", record: { connectionId: a1.connectionId } });
    await target.remove(a1);
    expect(ids(await target.list("a"))).toEqual([a2.connectionId]);
  });

  it("a device stays its tenant's while one of its environments is left, and is free once the last is removed", async () => {
    const { directory: target } = await directory();
    const first = await registered(target, fresh("a", "dev", "1"));
    const second = await registered(target, fresh("a", "dev", "2"));
    expect((await target.register(fresh("b", "dev", "3"))).kind).toBe("device-of-another-tenant");

    await target.remove(first);
    expect((await target.register(fresh("b", "dev", "3"))).kind).toBe("device-of-another-tenant");
    await target.remove(second);
    expect((await target.register(fresh("b", "dev", "3"))).kind).toBe("new");
  });

  it("the removal deletes the device's owner before the arriving environment is written: the registration claims the device again", async () => {
    const { kv } = await directory();
    const leaving = fresh("a", "dev", "1");
    const arriving = fresh("a", "dev", "2");
    const deviceDeleted = deferred();
    const target = new EnvironmentDirectory(
      gatedKv(kv, {
        beforePut: (key) => (key === `conn.${arriving.connectionId}` ? deviceDeleted.promise : undefined),
        afterDelete: (key) => (key.startsWith("device.") ? deviceDeleted.resolve() : undefined),
      }),
    );
    await registered(target, leaving);
    const [, outcome] = await Promise.all([target.remove(leaving), target.register(arriving)]);
    expect(outcome.kind).toBe("new");
    expect(await ownerOf(kv, "dev")).toBe("a");
    expect((await target.register(fresh("b", "dev", "3"))).kind).toBe("device-of-another-tenant");
  });

  it("the registration confirms the device between the removal's count and its delete: the delete is refused and the device stays", async () => {
    const { kv } = await directory();
    const leaving = fresh("a", "dev", "1");
    const arriving = fresh("a", "dev", "2");
    const deleteCalled = deferred();
    const registrationDone = deferred();
    const target = new EnvironmentDirectory(
      gatedKv(kv, {
        beforePut: (key) => (key === `conn.${arriving.connectionId}` ? deleteCalled.promise : undefined),
        beforeDelete: (key) => {
          if (!key.startsWith("device.")) return undefined;
          deleteCalled.resolve();
          return registrationDone.promise;
        },
      }),
    );
    await registered(target, leaving);
    const removal = target.remove(leaving);
    const outcome = await target.register(arriving);
    registrationDone.resolve();
    await removal;
    expect(outcome.kind).toBe("new");
    expect(await ownerOf(kv, "dev")).toBe("a");
    expect((await target.register(fresh("b", "dev", "3"))).kind).toBe("device-of-another-tenant");
  });
});
