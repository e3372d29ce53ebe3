/**
 * One relay of benchmark 10, in its own process: the reference relay (`startRelay`, one-socket
 * listener mode, heartbeat off — as bench/processes/hop-side.ts runs it), either alone (no
 * arguments: the baseline) or as one node of a cluster (`<nats url> <node id> <lease TTL ms>`:
 * `cluster: { servers, nodeId, leaseTtlMs }`). The options are otherwise the same, so the two
 * differ only by the cluster.
 */
import { pathToFileURL } from "node:url";
import { serveParent } from "../harness/child-process.js";
import type * as RelayModule from "../harness/relay-entry.js";
import { RELAY_BENCH_KEY } from "./relay-bench-key.js";

const bundle = process.env.TOOLRELAY_BENCH_RELAY;
const { startRelay }: typeof RelayModule = bundle ? await import(pathToFileURL(bundle).href) : await import("../harness/relay-entry.js");

const [natsUrl, nodeId, leaseTtl] = process.argv.slice(2);
if (natsUrl !== undefined && (nodeId === undefined || leaseTtl === undefined)) {
  throw new Error("cluster-side: pass nothing (a single relay) or <nats url> <node id> <lease TTL ms>");
}

const relay = await startRelay({
  apiKeys: [RELAY_BENCH_KEY],
  listenerMode: "single",
  heartbeatIntervalMs: 0,
  ...(natsUrl !== undefined ? { cluster: { servers: [natsUrl], nodeId, leaseTtlMs: Number(leaseTtl) } } : {}),
});

const parent = serveParent(async (cmd) => {
  if (cmd === "environments") return { environments: relay.environments() };
  // Open connections count the sockets this node pipes to another node as well as its own.
  if (cmd === "stats") return { connections: relay.stats().connections };
  throw new Error(`unknown command ${cmd}`);
});
parent.ready({ relayHttpUrl: relay.httpUrl, nodeId: nodeId ?? "single", pid: process.pid });

process.on("SIGTERM", () => {
  void relay.close().finally(() => process.exit(0));
});
