/**
 * The relay cluster on one machine, for the cluster suites (docs/relay-cluster.md): real
 * `nats-server` with JetStream, N relay nodes (each its own process, `--cluster`), a plain
 * round-robin TCP balancer in front of them (no sticky sessions), the scripted model and the REAL
 * Letta Code listener pointed at the balancer. The SDK runs in the test process, also through the
 * balancer. The test can read the shared store (who holds an environment) and kill or freeze nodes.
 */
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { SessionOptions } from "../../packages/toolrelay/src/index.js";
import { startLettaListener, type LettaListener } from "./letta-listener-process.js";
import { startNatsServers, type NatsServers } from "./nats-servers.js";
import { startRoundRobinProxy, type RoundRobinProxy } from "./round-robin-proxy.js";
import { startTsxProcess, type TsxProcess } from "./tsx-process.js";

export const CLUSTER_API_KEY = "cluster-suite-key";

export interface ClusterNode {
  readonly nodeId: string;
  process: TsxProcess;
  port: number;
  /** `http://127.0.0.1:<port>` (the node itself, not the balancer). */
  url: string;
  /** Whether the node was killed (and not started again). */
  dead: boolean;
}

export interface ClusterStack {
  nats: NatsServers;
  nodes: ClusterNode[];
  proxy: RoundRobinProxy;
  /** The balancer's origin: the SDK's `baseUrl`, the listener's `LETTA_BASE_URL`. */
  url: string;
  modelHandle: string;
  envName: string;
  listener: LettaListener | undefined;
  /** The environment's connection id (via the balancer); rejects while its listener is offline. */
  connectionId(): Promise<string>;
  /** The node holding `connectionId` now, from the shared store (`undefined`: none). */
  holder(connectionId: string): Promise<ClusterNode | undefined>;
  /** kill -9 a node. */
  kill(node: ClusterNode): Promise<void>;
  /** Starts a killed node again (a new process, a new port, the same node id) and adds it to the balancer. */
  restart(node: ClusterNode): Promise<void>;
  /** Session options for the cloud backend through the balancer. */
  sessionOptions(extra?: Partial<SessionOptions>): SessionOptions;
  stop(): Promise<void>;
}

export interface ClusterStackOptions {
  envName: string;
  nodes?: number;
  natsServers?: 1 | 3;
  leaseTtlMs?: number;
  /** Extra arguments for every node. */
  relayArgs?: string[];
  /** Start the real listener (default true). */
  listener?: boolean;
}

async function startNode(nodeId: string, natsUrls: string[], options: ClusterStackOptions): Promise<{ process: TsxProcess; port: number }> {
  const child = startTsxProcess("packages/relay/src/bin.ts", [
    "--port",
    "0",
    "--api-key",
    CLUSTER_API_KEY,
    "--listener-mode",
    "paired",
    "--enable-test-hooks",
    "--verbose",
    "--cluster",
    natsUrls.join(","),
    "--node-id",
    nodeId,
    "--lease-ttl-ms",
    String(options.leaseTtlMs ?? 1_500),
    ...(options.natsServers === 3 ? ["--cluster-replicas", "3"] : []),
    ...(options.relayArgs ?? []),
  ]);
  const [, url] = await child.waitForLine(/^Relay listening on (\S+)$/, 30_000);
  return { process: child, port: Number(new URL(url!).port) };
}

export async function startClusterStack(options: ClusterStackOptions): Promise<ClusterStack> {
  const stoppers: Array<() => Promise<void>> = [];
  try {
    const nats = await startNatsServers({ count: options.natsServers ?? 1 });
    stoppers.push(() => nats.stop());
    const model = startTsxProcess("integration/support/directive-model-main.ts");
    stoppers.push(() => model.stop());
    const [, modelUrl, modelHandle] = await model.waitForLine(/^Model listening on (\S+) handle (\S+)$/);
    const nodes: ClusterNode[] = [];
    const started = await Promise.all(
      Array.from({ length: options.nodes ?? 3 }, (_, index) => startNode(`n${index + 1}`, nats.urls, options)),
    );
    for (const [index, part] of started.entries()) {
      nodes.push({ nodeId: `n${index + 1}`, process: part.process, port: part.port, url: `http://127.0.0.1:${part.port}`, dead: false });
    }
    stoppers.push(async () => {
      await Promise.all(nodes.map((node) => node.process.stop()));
    });
    const targets = () => nodes.filter((node) => !node.dead).map((node) => ({ host: "127.0.0.1", port: node.port }));
    const proxy = await startRoundRobinProxy(targets());
    stoppers.push(() => proxy.close());
    const connection: NatsConnection = await connect({ servers: nats.urls });
    stoppers.push(() => connection.close());
    const leases = await new Kvm(connection).open("toolrelay_leases");
    const url = proxy.url;
    let listener: LettaListener | undefined;
    if (options.listener !== false) {
      listener = await startLettaListener({ relayUrl: url, envName: options.envName, modelUrl: modelUrl!, apiKey: CLUSTER_API_KEY });
      stoppers.push(() => listener!.stop());
    }
    const authorization = { authorization: `Bearer ${CLUSTER_API_KEY}` };
    const stack: ClusterStack = {
      nats,
      nodes,
      proxy,
      url,
      modelHandle: modelHandle!,
      envName: options.envName,
      listener,
      async connectionId() {
        const response = await fetch(`${url}/v1/environments`, { headers: authorization });
        const body = (await response.json()) as { connections: Array<{ connectionId: string | null; connectionName: string }> };
        const match = body.connections.find((entry) => entry.connectionName === options.envName);
        if (!match?.connectionId) throw new Error(`environment ${options.envName} is not connected`);
        return match.connectionId;
      },
      async holder(connectionId) {
        const entry = await leases.get(connectionId);
        if (entry?.operation !== "PUT") return undefined;
        const { nodeId } = entry.json<{ nodeId: string }>();
        return nodes.find((node) => node.nodeId === nodeId);
      },
      async kill(node) {
        node.dead = true;
        process.kill(node.process.pid, "SIGKILL");
        await node.process.stop();
      },
      async restart(node) {
        const part = await startNode(node.nodeId, nats.urls, options);
        node.process = part.process;
        node.port = part.port;
        node.url = `http://127.0.0.1:${part.port}`;
        node.dead = false;
        proxy.setTargets(targets());
      },
      sessionOptions(extra = {}) {
        return {
          backend: {
            kind: "cloud",
            apiKey: CLUSTER_API_KEY,
            baseUrl: url,
            environment: { name: options.envName },
            pingIntervalMs: 1_000,
            pongTimeoutMs: 3_000,
            backoff: { initialDelayMs: 50, maxDelayMs: 500 },
          },
          agent: { create: { model: modelHandle!, name: "toolrelay-cluster" } },
          conversation: "new",
          mode: "unrestricted",
          reconnectGraceMs: 30_000,
          requestTimeoutMs: 30_000,
          ...extra,
        };
      },
      async stop() {
        for (const stop of stoppers.splice(0).reverse()) await stop().catch(() => {});
      },
    };
    return stack;
  } catch (error) {
    for (const stop of stoppers.splice(0).reverse()) await stop().catch(() => {});
    throw error;
  }
}
