/**
 * The relay cluster's environment directory (packages/relay/src/cluster/environment-directory.ts)
 * against a REAL nats-server: a tenant's environments are read through its own index, never by
 * reading every tenant's records; a device stays its tenant's while one of its environments is
 * left; and a removal of a device's last environment that races a registration of another
 * environment of the same device never leaves that environment with an ownerless device (which
 * another tenant could then claim) — each interleaving made to happen by holding calls of the
 * real bucket until the other side has moved.
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

type KvMethod = "get" | "put" | "create" | "update" | "delete";

/**
 * The real bucket, with a wait before some of its calls and a hook after them: a race between two
 * nodes made to happen in one order. `before` may return a promise the call waits for.
 */
function gatedKv(
  kv: KV,
  gates: { before?(method: KvMethod, key: string): Promise<void> | undefined; after?(method: KvMethod, key: string): void },
): KV {
  const gated = new Set<PropertyKey>(["get", "put", "create", "update", "delete"]);
  return new Proxy(kv, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (!gated.has(property)) return value.bind(target);
      const method = property as KvMethod;
      return async (key: string, ...rest: unknown[]) => {
        await gates.before?.(method, key);
        const result: unknown = await (value as (...args: unknown[]) => Promise<unknown>).call(target, key, ...rest);
        gates.after?.(method, key);
        return result;
      };
    },
  });
}

/**
 * The gates of both races: the removal's first read of the device's owner waits until the arriving
 * registration has claimed the device (so the removal reads the claimed revision).
 */
function afterTheClaim(): {
  /** From now on (the leaving environment is registered): the race's calls are held. */
  arm(): void;
  before(method: KvMethod, key: string): Promise<void> | undefined;
  after(method: KvMethod, key: string): void;
} {
  const claimed = deferred();
  let armed = false;
  let reads = 0;
  return {
    arm: () => {
      armed = true;
    },
    before: (method, key) => (armed && method === "get" && key.startsWith("device.") && reads++ === 0 ? claimed.promise : undefined),
    after: (method, key) => {
      if (armed && method === "update" && key.startsWith("device.")) claimed.resolve();
    },
  };
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
    const claim = afterTheClaim();
    const deviceDeleted = deferred();
    const target = new EnvironmentDirectory(
      gatedKv(kv, {
        before: (method, key) =>
          claim.before(method, key) ?? (method === "put" && key === `conn.${arriving.connectionId}` ? deviceDeleted.promise : undefined),
        after: (method, key) => {
          claim.after(method, key);
          if (method === "delete" && key.startsWith("device.")) deviceDeleted.resolve();
        },
      }),
    );
    await registered(target, leaving);
    claim.arm();
    const [, outcome] = await Promise.all([target.remove(leaving), target.register(arriving)]);
    expect(outcome.kind).toBe("new");
    expect(await ownerOf(kv, "dev")).toBe("a");
    expect((await target.register(fresh("b", "dev", "3"))).kind).toBe("device-of-another-tenant");
  });

  it("the registration confirms the device between the removal's count and its delete: the delete is refused and the device stays", async () => {
    const { kv } = await directory();
    const leaving = fresh("a", "dev", "1");
    const arriving = fresh("a", "dev", "2");
    const claim = afterTheClaim();
    const deleteCalled = deferred();
    const registrationDone = deferred();
    const target = new EnvironmentDirectory(
      gatedKv(kv, {
        before: (method, key) => {
          const held = claim.before(method, key);
          if (held) return held;
          if (method === "put" && key === `conn.${arriving.connectionId}`) return deleteCalled.promise;
          if (method !== "delete" || !key.startsWith("device.")) return undefined;
          deleteCalled.resolve();
          return registrationDone.promise;
        },
        after: claim.after,
      }),
    );
    await registered(target, leaving);
    claim.arm();
    const removal = target.remove(leaving);
    const outcome = await target.register(arriving);
    registrationDone.resolve();
    await removal;
    expect(outcome.kind).toBe("new");
    expect(await ownerOf(kv, "dev")).toBe("a");
    expect((await target.register(fresh("b", "dev", "3"))).kind).toBe("device-of-another-tenant");
  });
});
