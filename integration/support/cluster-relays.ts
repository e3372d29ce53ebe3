/**
 * Three relay nodes of one cluster in the test process, for the security suites
 * (docs/relay-cluster.md): one real `nats-server` with JetStream, three IN-PROCESS relays started
 * with the same options (each `port: 0`, its own node id, one bucket prefix per test file) and a
 * plain round-robin TCP balancer in front of them. The facade reads like a single {@link Relay}:
 * `url` / `httpUrl` are the balancer's, so every request and every socket of a scenario lands on
 * any node; events are the three nodes' together (a refusal is counted on the node that refused
 * it); `environment(id)` is the holder's view (only the node holding an environment has it).
 * Test hooks act on the node that receives them: a scenario that needs one calls the nodes' own
 * `httpUrl`s ({@link ClusterRelays.nodes}, {@link ClusterRelays.holder}).
 */
import type { EventEmitter } from "eventemitter3";
import { startRelay, type Relay, type RelayEnvironmentInfo, type RelayEvents, type RelayOptions } from "../../packages/relay/src/index.js";
import { startNatsServers, type NatsServers } from "./nats-servers.js";
import { startRoundRobinProxy, type RoundRobinProxy } from "./round-robin-proxy.js";

/** The lease TTL of every node (the cluster suites' value: a dead holder's environments move within ~2 s). */
export const CLUSTER_LEASE_TTL_MS = 1_500;

/** What {@link startClusterRelays} starts. */
export interface ClusterRelaysOptions {
  /** Bucket prefix (`cluster.name`), unique per test file (and per cluster when a file starts several on one NATS server). */
  name: string;
  /** A NATS server to use (the caller stops it); default: a fresh one, stopped by {@link ClusterRelays.stop}. */
  nats?: NatsServers | undefined;
}

/** Three relay nodes behind a round-robin balancer, used like one relay. */
export interface ClusterRelays {
  /** The balancer's WebSocket origin, `ws://127.0.0.1:<port>`. */
  readonly url: string;
  /** The balancer's HTTP origin: registrations, listings and hooks sent here land on any node. */
  readonly httpUrl: string;
  /** The three nodes (`n1`, `n2`, `n3`), each with its own `url` / `httpUrl`. */
  readonly nodes: readonly Relay[];
  readonly nats: NatsServers;
  readonly proxy: RoundRobinProxy;
  /** Listens to `event` on every node. */
  on<K extends keyof RelayEvents>(event: K, listener: EventEmitter.EventListener<RelayEvents, K>): this;
  /** A status socket URL through the balancer. */
  statusUrl: Relay["statusUrl"];
  /** The environment as the node holding it sees it (`undefined`: no node holds it now). */
  environment(connectionId: string): RelayEnvironmentInfo | undefined;
  /** The node holding the environment now (the one whose `environment(id)` is defined). */
  holder(connectionId: string): Relay | undefined;
  /** Every node's `httpUrl` (a test hook acts on the node that receives it). */
  nodeOrigins(): string[];
  /** Stops the nodes, the balancer and (when it started it) the NATS server. Idempotent. */
  stop(): Promise<void>;
}

class ClusterRelaysFacade implements ClusterRelays {
  readonly url: string;
  readonly httpUrl: string;
  readonly nodes: readonly Relay[];
  readonly nats: NatsServers;
  readonly proxy: RoundRobinProxy;
  readonly #ownsNats: boolean;
  #stopping: Promise<void> | undefined;

  constructor(nodes: Relay[], nats: NatsServers, ownsNats: boolean, proxy: RoundRobinProxy) {
    this.nodes = nodes;
    this.nats = nats;
    this.#ownsNats = ownsNats;
    this.proxy = proxy;
    this.httpUrl = proxy.url;
    this.url = proxy.url.replace(/^http:/, "ws:");
  }

  on<K extends keyof RelayEvents>(event: K, listener: EventEmitter.EventListener<RelayEvents, K>): this {
    for (const node of this.nodes) node.on(event, listener);
    return this;
  }

  statusUrl: Relay["statusUrl"] = (connectionId, query) => {
    const url = new URL(`${this.url}/v1/environments/${encodeURIComponent(connectionId)}/status/ws`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value);
    return url.toString();
  };

  environment(connectionId: string): RelayEnvironmentInfo | undefined {
    return this.holder(connectionId)?.environment(connectionId);
  }

  holder(connectionId: string): Relay | undefined {
    return this.nodes.find((node) => node.environment(connectionId) !== undefined);
  }

  nodeOrigins(): string[] {
    return this.nodes.map((node) => node.httpUrl);
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await Promise.all(this.nodes.map((node) => node.close().catch(() => {})));
      await this.proxy.close();
      if (this.#ownsNats) await this.nats.stop();
    })();
    return this.#stopping;
  }
}

/**
 * Starts a NATS server (unless one is given), three relays with `options` plus
 * `cluster: { servers, nodeId: "n1".."n3", leaseTtlMs: 1500, name }` and the balancer. On a failure,
 * whatever started is stopped before the error is thrown.
 */
export async function startClusterRelays(options: RelayOptions, cluster: ClusterRelaysOptions): Promise<ClusterRelays> {
  const nats = cluster.nats ?? (await startNatsServers({ count: 1 }));
  const nodes: Relay[] = [];
  try {
    for (const nodeId of ["n1", "n2", "n3"]) {
      nodes.push(
        await startRelay({
          ...options,
          port: 0,
          cluster: { servers: nats.urls, nodeId, leaseTtlMs: CLUSTER_LEASE_TTL_MS, name: cluster.name },
        }),
      );
    }
    const proxy = await startRoundRobinProxy(nodes.map((node) => ({ host: "127.0.0.1", port: node.port })));
    return new ClusterRelaysFacade(nodes, nats, cluster.nats === undefined, proxy);
  } catch (error) {
    await Promise.all(nodes.map((node) => node.close().catch(() => {})));
    if (cluster.nats === undefined) await nats.stop();
    throw error;
  }
}
