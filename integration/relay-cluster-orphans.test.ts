/**
 * Environments nobody holds (docs/relay-cluster.md "Environments nobody holds"): three relay nodes
 * on one real NATS server. An environment's holder leaves while its listener is gone too, so no
 * node runs its grace timer. A surviving node's sweep takes it over, its grace time runs out there,
 * and it is removed for good — its records leave the store and stop counting against the tenant's
 * environment cap. An environment whose listener is connected is never taken from its holder.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RelayOptions } from "../packages/relay/src/index.js";
import { FakeListener, registerListener } from "../test/relay/support/fake-listener.js";
import { httpJson } from "../test/relay/support/http-json.js";
import { startClusterRelays, type ClusterRelays } from "./support/cluster-relays.js";

const KEY = "orphans-tenant-key-0123456789";
/** The grace time of an environment whose listener is away (short, so the test sees it run out). */
const GRACE_MS = 2_000;

const cleanups: Array<() => Promise<unknown> | undefined> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cluster(): Promise<ClusterRelays> {
  const started = await startClusterRelays(
    {
      tenants: { tenant: [KEY] },
      heartbeatIntervalMs: 0,
      environmentGraceMs: GRACE_MS,
      maxEnvironmentsPerTenant: 2,
    } satisfies RelayOptions,
    { name: `orphans_${process.pid}_${Date.now()}` },
  );
  cleanups.push(() => started.stop());
  return started;
}

/** The device ids `GET /v1/environments` lists for the tenant. */
async function listedDevices(origin: string): Promise<string[]> {
  const { json } = await httpJson(`${origin}/v1/environments`, { headers: { authorization: `Bearer ${KEY}` } });
  const connections = (json as { connections?: Array<{ deviceId: string }> } | undefined)?.connections ?? [];
  return connections.map((connection) => connection.deviceId).sort();
}

describe("relay cluster: environments nobody holds", () => {
  it("a holder leaves while the listener is gone: a survivor takes the environment over, its grace runs out, it is removed and frees the cap", async () => {
    const relays = await cluster();
    const [first, second, third] = relays.nodes;
    const removed: string[] = [];
    relays.on("environment-removed", (connectionId) => removed.push(connectionId));

    const staying = await FakeListener.start(second!.httpUrl, KEY, { deviceId: "staying", connectionName: "staying" });
    cleanups.push(() => {
      staying.terminate();
      return undefined;
    });
    const leaving = await FakeListener.start(first!.httpUrl, KEY, { deviceId: "leaving", connectionName: "leaving" });
    const orphan = leaving.answer.connectionId;
    expect(relays.holder(orphan)).toBe(first);
    // At the cap of 2: a third device is refused.
    expect((await registerListener(third!.httpUrl, KEY, { deviceId: "third", connectionName: "third" })).status).toBe(429);
    expect(await listedDevices(third!.httpUrl)).toEqual(["leaving", "staying"]);

    // The listener goes away, then its holder leaves: nobody holds the environment or runs its grace timer.
    leaving.terminate();
    await first!.close();
    expect(relays.holder(orphan)).toBeUndefined();

    // The sweep (every 1.5–3 s here) takes it over; the grace (2 s) runs out; it is removed for good.
    await expect.poll(() => removed.includes(orphan), { timeout: 15_000, interval: 100 }).toBe(true);
    expect(await listedDevices(third!.httpUrl)).toEqual(["staying"]);
    await expect
      .poll(async () => (await registerListener(third!.httpUrl, KEY, { deviceId: "third", connectionName: "third" })).status, {
        timeout: 5_000,
      })
      .toBe(200);

    // The environment with a connected listener stayed with its holder through every sweep.
    expect(relays.holder(staying.answer.connectionId)).toBe(second);
    expect(removed).not.toContain(staying.answer.connectionId);
  });
});
