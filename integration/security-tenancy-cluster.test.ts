/**
 * Issue 27: the two-tenant scenario (support-security/tenancy-scenario.ts) across a relay cluster —
 * three nodes sharing one real NATS JetStream server, a round-robin TCP balancer in front. Every
 * request and socket of the scenario goes through the balancer, so registrations, listener sockets
 * and status sockets land on any node (and are piped to the node holding the environment); every
 * socket upgrade and test hook of tenant B is also tried at each node directly. None may succeed,
 * and A is untouched — the same assertions as on one relay.
 */
import { describe, expect, it } from "vitest";
import { startClusterRelays, type ClusterRelays } from "./support/cluster-relays.js";
import { describeTenancy } from "../test/reliability/support-security/tenancy-scenario.js";

let cluster: ClusterRelays | undefined;

describeTenancy(
  "two tenants, three cluster nodes behind a balancer",
  async (options) => {
    cluster = await startClusterRelays(options, { name: "security_tenancy_cluster" });
    const started = cluster;
    return { relay: started, origins: [started.httpUrl, ...started.nodeOrigins()], stop: () => started.stop() };
  },
  30_000,
);

describe("the scenario's spread", () => {
  it("the balancer sent the scenario's connections to every node", () => {
    const counts = cluster!.proxy.counts();
    const holders = cluster!.nodes.map((node) => node.environments().map((environment) => environment.tenant));
    console.info("[tenancy cluster] connections per node through the balancer:", counts, "environments held per node:", holders);
    expect(Object.keys(counts)).toHaveLength(3);
    expect(Object.values(counts).every((count) => count >= 5)).toBe(true);
  });
});
