/**
 * Benchmark 10: the relay's cluster mode (issue 27) against one relay, in one run. Processes on
 * loopback: the runtime side (bench/processes/runtime-side.ts, the listener), one `nats-server -js`
 * (integration/support/nats-servers.ts), two single relays and three cluster nodes
 * (bench/processes/cluster-side.ts, `cluster: { servers, nodeId, leaseTtlMs }`), a round-robin TCP
 * balancer (bench/processes/balancer-side.ts), and the SDK sessions (cloud backend, no-op tool) in
 * the bench process. The clients:
 *
 * - `single`: one relay, listener and SDK straight to it (relay-hop's "toolrelay (cloud backend)");
 * - `single-lb`: another single relay, listener and SDK through the balancer (the balancer's hop);
 * - `cluster-holder`: the SDK's sockets through the balancer to the node that holds the
 *   environment (no pipe: the KV write per call is the difference);
 * - `cluster-cross`: the SDK's sockets through the balancer to the nodes that do NOT hold it
 *   (balancer → entry node → pipe → holder → listener).
 *
 * The listener of the cluster registers through the balancer; the node its socket lands on takes
 * the lease. Which node that is comes from the `toolrelay_leases` bucket, and the balancer's
 * targets are set before each cluster session so its sockets land where they should.
 */
import { readFileSync } from "node:fs";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { startNatsServers, type NatsServers } from "../../integration/support/nats-servers.js";
import { BenchChild } from "../harness/child-process.js";
import { noopTool, type BenchClient } from "../harness/clients.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { latencyRounds, throughputRounds } from "../harness/rounds.js";
import { createSession } from "../harness/sdk.js";
import { formatMicros, formatRate, ratio, summarize, type Summary } from "../harness/stats.js";
import { RELAY_BENCH_KEY } from "../processes/relay-bench-key.js";

export interface RelayClusterConfig {
  warmupIterations: number;
  rounds: number;
  iterationsPerRound: number;
  inFlight: number;
  throughputCalls: number;
  throughputRounds: number;
  /** Sequential KV creates (+ deletes) timed from the bench process after the rounds, on a scratch bucket. */
  kvProbeWrites: number;
  leaseTtlMs: number;
}

export const fullRelayClusterConfig: RelayClusterConfig = {
  warmupIterations: 1_000,
  rounds: 8,
  iterationsPerRound: 1_000,
  inFlight: 256,
  throughputCalls: 10_000,
  throughputRounds: 4,
  kvProbeWrites: 2_000,
  leaseTtlMs: 3_000,
};

export const quickRelayClusterConfig: RelayClusterConfig = {
  warmupIterations: 10,
  rounds: 1,
  iterationsPerRound: 20,
  inFlight: 8,
  throughputCalls: 32,
  throughputRounds: 1,
  kvProbeWrites: 20,
  leaseTtlMs: 3_000,
};

const SECTION = "10. Relay cluster";
const NODE_IDS = ["n1", "n2", "n3"] as const;
const LABELS = ["single", "single-lb", "cluster-holder", "cluster-cross"] as const;
type Label = (typeof LABELS)[number];

/** G4: the cluster's round trip may exceed one relay's by at most this much (µs). */
const P50_ALLOWANCE_MICROS = 1_000;
const P99_ALLOWANCE_MICROS = 10_000;
/** G5: the cluster's throughput, at least this fraction of one relay's. */
const THROUGHPUT_GOAL = 0.5;

/** The row to show when the cluster cannot be set up (so the table says why). */
export function pendingClusterResult(reason: string, seconds: number): SuiteResult {
  const note = `pending: ${reason.split("\n")[0]!.slice(0, 200)}`;
  return {
    name: "relay-cluster",
    rows: [
      {
        section: SECTION,
        measure: "round trip p50, SDK on a node that does not hold the environment",
        baselineName: "one relay",
        baselineValue: "—",
        candidateName: "3-node cluster",
        candidateValue: "—",
        ratio: Number.NaN,
        goal: { text: "≤ +1 ms", met: false },
        note,
      },
    ],
    notes: [`**relay cluster ${note}**`],
    seconds,
  };
}

interface ClusterNodeChild {
  nodeId: string;
  child: BenchChild;
  port: number;
}

const target = (port: number) => ({ host: "127.0.0.1", port });
const portOf = (httpUrl: string) => Number(new URL(httpUrl).port);

/** CPU time (user + system, µs) the processes `pids` have used so far, from /proc/<pid>/stat (clock ticks of 10 ms); a gone pid counts 0. */
function cpuMicrosOf(pids: readonly number[]): number {
  let micros = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // Fields after the command name (which may hold spaces, in parentheses): utime and stime are the 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      micros += (Number(fields[11]) + Number(fields[12])) * (1_000_000 / CLOCK_TICKS_PER_SECOND);
    } catch {
      // gone (or no /proc): counts 0
    }
  }
  return micros;
}

/** `getconf CLK_TCK` on Linux. */
const CLOCK_TICKS_PER_SECOND = 100;

/** The node id in the lease of `connectionId`, polled until the listener is connected there (≤ 10 s). */
async function holderOf(leases: KV, connectionId: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const entry = await leases.get(connectionId);
    if (entry?.operation === "PUT") {
      const lease = entry.json<{ nodeId: string; listenerReady?: boolean }>();
      if (lease.listenerReady === true) return lease.nodeId;
    }
    if (Date.now() > deadline) throw new Error(`relay cluster: no node holds ${connectionId} with its listener ready after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The KV write the holder awaits before it delivers each call, alone, from the bench process on a
 * scratch bucket: `writes` creates one at a time (µs each; each followed by its delete, as the
 * relay deletes a call once answered), then as many with `inFlight` create-then-delete pairs at
 * once (creates per second: what JetStream takes when the writes overlap).
 */
async function probeKvWrites(
  connection: NatsConnection,
  writes: number,
  inFlight: number,
): Promise<{ sequential: Summary; overlappedPerSecond: number }> {
  const kv = await new Kvm(connection).create("bench_probe", { history: 1, ttl: 60_000 });
  const body = new TextEncoder().encode(JSON.stringify({ requestId: "probe", runtimeKey: "agent-bench/conv", frame: "x".repeat(200) }));
  try {
    const samples: number[] = [];
    for (let index = 0; index < writes; index++) {
      const started = process.hrtime.bigint();
      await kv.create(`sequential.${index}`, body);
      samples.push(Number(process.hrtime.bigint() - started) / 1000);
      await kv.delete(`sequential.${index}`);
    }
    let next = 0;
    const worker = async () => {
      while (next < writes) {
        const key = `overlapped.${next++}`;
        await kv.create(key, body);
        await kv.delete(key);
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: Math.min(inFlight, writes) }, worker));
    return { sequential: summarize(samples), overlappedPerSecond: writes / ((performance.now() - started) / 1000) };
  } finally {
    await kv.destroy();
  }
}

export async function runRelayCluster(config: RelayClusterConfig, log: Log): Promise<SuiteResult> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const children: BenchChild[] = [];
  const clients: BenchClient[] = [];
  let nats: NatsServers | undefined;
  let connection: NatsConnection | undefined;
  const spawn = (script: string, args: string[] = []) => {
    const child = new BenchChild(script, { args, readyTimeoutMs: 30_000 });
    children.push(child);
    return child;
  };
  try {
    const runtime = spawn("bench/processes/runtime-side.ts");
    const balancer = spawn("bench/processes/balancer-side.ts");
    const single = spawn("bench/processes/cluster-side.ts");
    const singleBehindBalancer = spawn("bench/processes/cluster-side.ts");
    try {
      nats = await startNatsServers({ count: 1 });
    } catch (error) {
      return pendingClusterResult(`nats-server did not start: ${error instanceof Error ? error.message : String(error)}`, seconds());
    }
    const natsUrl = nats.urls[0]!;
    const nodes: ClusterNodeChild[] = [];
    const nodeChildren = NODE_IDS.map((nodeId) => ({
      nodeId,
      child: spawn("bench/processes/cluster-side.ts", [natsUrl, nodeId, String(config.leaseTtlMs)]),
    }));
    for (const { nodeId, child } of nodeChildren) {
      const { relayHttpUrl } = (await child.ready) as unknown as { relayHttpUrl: string };
      nodes.push({ nodeId, child, port: portOf(relayHttpUrl) });
    }
    await runtime.ready;
    await balancer.ready;
    const singleUrl = ((await single.ready) as unknown as { relayHttpUrl: string }).relayHttpUrl;
    const singleLbUrl = ((await singleBehindBalancer.ready) as unknown as { relayHttpUrl: string }).relayHttpUrl;
    const singleProxy = (await balancer.request("start", { targets: [target(portOf(singleLbUrl))] })) as unknown as {
      proxy: number;
      url: string;
    };
    const clusterProxy = (await balancer.request("start", { targets: nodes.map((node) => target(node.port)) })) as unknown as {
      proxy: number;
      url: string;
    };

    // The listener: straight to the first single relay, through the balancer to the second and to the cluster.
    const register = async (httpUrl: string) =>
      ((await runtime.request("registerRelay", { httpUrl, apiKey: RELAY_BENCH_KEY }, 20_000)) as unknown as { connectionId: string })
        .connectionId;
    const singleConnection = await register(singleUrl);
    const singleLbConnection = await register(singleProxy.url);
    const clusterConnection = await register(clusterProxy.url);

    connection = await connect({ servers: nats.urls });
    const leases = await new Kvm(connection).open("toolrelay_leases");
    const holderId = await holderOf(leases, clusterConnection);
    const holder = nodes.find((node) => node.nodeId === holderId);
    if (!holder) throw new Error(`relay cluster: the lease names ${holderId}, not one of ${NODE_IDS.join(", ")}`);
    const others = nodes.filter((node) => node !== holder);
    log(
      `relay cluster: ${clusterConnection} held by ${holder.nodeId}; the cross-node session goes to ${others.map((node) => node.nodeId).join(", ")}`,
    );

    const open = async (label: Label, baseUrl: string, connectionId: string) => {
      const session = await createSession({
        backend: { kind: "cloud", apiKey: RELAY_BENCH_KEY, baseUrl, environment: { connectionId } },
        agent: { id: "agent-bench" },
        tools: [noopTool],
        clientInfo: { name: label },
        requestTimeoutMs: 10_000,
      });
      clients.push({ label, close: () => session.close() });
    };
    const setClusterTargets = (targets: ClusterNodeChild[]) =>
      balancer.request("setTargets", { proxy: clusterProxy.proxy, targets: targets.map((node) => target(node.port)) });
    const countsBefore = (
      (await balancer.request("counts", { proxy: clusterProxy.proxy })) as unknown as { counts: Record<string, number> }
    ).counts;
    await open("single", singleUrl, singleConnection);
    await open("single-lb", singleProxy.url, singleLbConnection);
    await setClusterTargets([holder]);
    await open("cluster-holder", clusterProxy.url, clusterConnection);
    await setClusterTargets(others);
    await open("cluster-cross", clusterProxy.url, clusterConnection);
    const countsAfter = ((await balancer.request("counts", { proxy: clusterProxy.proxy })) as unknown as { counts: Record<string, number> })
      .counts;
    const placement = nodes
      .map((node) => {
        const key = `127.0.0.1:${node.port}`;
        return `${node.nodeId}${node === holder ? " (holder)" : ""} +${(countsAfter[key] ?? 0) - (countsBefore[key] ?? 0)}`;
      })
      .join(", ");
    // The holder carries both cluster sessions; the other nodes only pipe bytes (they hold no environment).
    const sessionsAt = async (node: ClusterNodeChild) => {
      const { environments } = (await node.child.request("environments")) as unknown as {
        environments: Array<{ connectionId: string; sdkSessions: number; listenerConnected: boolean }>;
      };
      return environments.find((environment) => environment.connectionId === clusterConnection);
    };
    const atHolder = await sessionsAt(holder);
    if (atHolder?.listenerConnected !== true || atHolder.sdkSessions !== 2) {
      throw new Error(`relay cluster: expected the listener and 2 SDK sessions at ${holder.nodeId}, found ${JSON.stringify(atHolder)}`);
    }
    for (const node of others) {
      if ((await sessionsAt(node)) !== undefined) throw new Error(`relay cluster: ${node.nodeId} holds a copy of ${clusterConnection}`);
    }
    log(`relay cluster: SDK connections through the balancer per node: ${placement}`);

    const labels = [...LABELS];
    const latency = await latencyRounds(runtime, labels, config);
    log(`relay cluster: ${config.rounds} latency rounds done`);
    const { rates, loaded } = await throughputRounds(runtime, labels, {
      rounds: config.throughputRounds,
      inFlight: config.inFlight,
      batchSize: () => config.throughputCalls,
    });
    log(`relay cluster: ${config.throughputRounds} throughput rounds done`);
    // Where the CPU goes: one more batch each of one relay and of the cluster (SDK piped), with the
    // CPU time every process used during it. On one machine the cluster's throughput is bound by
    // its CPU per call against one relay's.
    const groups = (labelled: Record<string, number[]>) => labelled;
    const nodePids = nodes.map((node) => node.child.process.pid ?? -1);
    const cpuGroups = groups({
      "SDK + listener (runtime side)": [runtime.process.pid ?? -1],
      "relay nodes": nodePids,
      "one relay": [single.process.pid ?? -1],
      "nats-server": nats.servers.map((server) => server.pid),
      balancer: [balancer.process.pid ?? -1],
    });
    const cpuPerCall: Record<string, Record<string, number>> = {};
    for (const label of ["single", "cluster-cross"] as const) {
      const before = Object.fromEntries(Object.entries(cpuGroups).map(([name, pids]) => [name, cpuMicrosOf(pids)]));
      await runtime.request("throughput", { label, total: config.throughputCalls, inFlight: config.inFlight });
      cpuPerCall[label] = Object.fromEntries(
        Object.entries(cpuGroups).map(([name, pids]) => [name, (cpuMicrosOf(pids) - before[name]!) / config.throughputCalls]),
      );
    }
    const cpuTotal = (label: "single" | "cluster-cross") => Object.values(cpuPerCall[label]!).reduce((sum, value) => sum + value, 0);
    const cpuNote = (label: "single" | "cluster-cross") =>
      Object.entries(cpuPerCall[label]!)
        .filter(([, value]) => value >= 1)
        .map(([name, value]) => `${name} ${formatMicros(value)}`)
        .join(", ");
    log(
      `relay cluster: CPU per call: one relay ${formatMicros(cpuTotal("single"))} (${cpuNote("single")}); cluster ${formatMicros(cpuTotal("cluster-cross"))} (${cpuNote("cluster-cross")})`,
    );
    const holderAfter = await holderOf(leases, clusterConnection);
    const cpuRow: ResultRow = {
      section: SECTION,
      measure: "CPU per call, every process (SDK piped by another node)",
      baselineName: "one relay",
      baselineValue: formatMicros(cpuTotal("single")),
      candidateName: "3-node cluster",
      candidateValue: formatMicros(cpuTotal("cluster-cross")),
      ratio: ratio(cpuTotal("cluster-cross"), cpuTotal("single")),
      note: `one relay: ${cpuNote("single")}; cluster: ${cpuNote("cluster-cross")} (one batch each, /proc CPU times)`,
    };
    const callsBucket = await (await new Kvm(connection).open("toolrelay_calls")).status();
    const { sequential: kvProbe, overlappedPerSecond: kvOverlapped } = await probeKvWrites(
      connection,
      config.kvProbeWrites,
      config.inFlight,
    );
    log(`relay cluster: KV create probe p50 ${formatMicros(kvProbe.p50)}, ${formatRate(kvOverlapped)} with ${config.inFlight} in flight`);

    const lat = Object.fromEntries(LABELS.map((label) => [label, summarize(latency.get(label)!)])) as Record<Label, Summary>;
    const rate = Object.fromEntries(LABELS.map((label) => [label, summarize(rates.get(label)!).p50])) as Record<Label, number>;
    const underLoad = Object.fromEntries(LABELS.map((label) => [label, summarize(loaded.get(label)!)])) as Record<Label, Summary>;
    const plus = (candidate: number, baseline: number) => {
      const difference = candidate - baseline;
      return `${difference >= 0 ? "+" : "−"}${formatMicros(Math.abs(difference))}`;
    };
    const moved = holderAfter === holder.nodeId ? "" : `; the lease moved to ${holderAfter} during the run: figures suspect`;
    const rows: ResultRow[] = [];
    for (const [quantile, allowance, goalText] of [
      ["p50", P50_ALLOWANCE_MICROS, "≤ +1 ms"],
      ["p99", P99_ALLOWANCE_MICROS, "≤ +10 ms"],
    ] as const) {
      const cross = lat["cluster-cross"][quantile];
      const base = lat.single[quantile];
      rows.push({
        section: SECTION,
        measure: `round trip ${quantile}, SDK on a node that does not hold the environment (piped)`,
        baselineName: "one relay",
        baselineValue: formatMicros(base),
        candidateName: "3-node cluster via balancer",
        candidateValue: formatMicros(cross),
        ratio: ratio(cross, base),
        goal: { text: goalText, met: cross - base <= allowance },
        note: `${plus(cross, base)}; SDK on the holder ${formatMicros(lat["cluster-holder"][quantile])} (${plus(lat["cluster-holder"][quantile], base)}); one relay via the balancer ${formatMicros(lat["single-lb"][quantile])} (${plus(lat["single-lb"][quantile], base)})${moved}`,
      });
    }
    for (const quantile of ["p50", "p99"] as const) {
      const onHolder = lat["cluster-holder"][quantile];
      const viaBalancer = lat["single-lb"][quantile];
      rows.push({
        section: SECTION,
        measure: `round trip ${quantile}, SDK on the holder (no pipe): the KV write`,
        baselineName: "one relay via the balancer",
        baselineValue: formatMicros(viaBalancer),
        candidateName: "cluster, SDK on the holder",
        candidateValue: formatMicros(onHolder),
        ratio: ratio(onHolder, viaBalancer),
        note: `${plus(onHolder, viaBalancer)}; a KV create alone from the bench process: ${formatMicros(kvProbe[quantile])}`,
      });
    }
    for (const quantile of ["p50", "p99"] as const) {
      const cross = lat["cluster-cross"][quantile];
      const onHolder = lat["cluster-holder"][quantile];
      rows.push({
        section: SECTION,
        measure: `round trip ${quantile}, the pipe alone`,
        baselineName: "cluster, SDK on the holder",
        baselineValue: formatMicros(onHolder),
        candidateName: "cluster, SDK piped by another node",
        candidateValue: formatMicros(cross),
        ratio: ratio(cross, onHolder),
        note: plus(cross, onHolder),
      });
    }
    if (rates.get("single")!.length > 0) {
      const crossRatio = ratio(rate["cluster-cross"], rate.single);
      rows.push({
        section: SECTION,
        measure: `throughput, ${config.inFlight} in flight, SDK on a node that does not hold the environment`,
        baselineName: "one relay",
        baselineValue: formatRate(rate.single),
        candidateName: "3-node cluster via balancer",
        candidateValue: formatRate(rate["cluster-cross"]),
        ratio: crossRatio,
        goal: { text: `≥ ${THROUGHPUT_GOAL}×`, met: crossRatio >= THROUGHPUT_GOAL },
        note: `SDK on the holder ${formatRate(rate["cluster-holder"])} (${ratio(rate["cluster-holder"], rate.single).toFixed(2)}×); one relay via the balancer ${formatRate(rate["single-lb"])} (${ratio(rate["single-lb"], rate.single).toFixed(2)}×); one KV create at a time (p50 ${formatMicros(kvProbe.p50)}) allows ${formatRate(1e6 / kvProbe.p50)}, ${config.inFlight} create+delete pairs at once ${formatRate(kvOverlapped)}; round trip p50 under load: one relay ${formatMicros(underLoad.single.p50)}, cluster ${formatMicros(underLoad["cluster-cross"].p50)}`,
      });
    }
    rows.push(cpuRow);
    return {
      name: "relay-cluster",
      rows,
      notes: [
        `Relay cluster (issue 27): the SDK's cloud backend with a no-op tool against the runtime side (bench/processes/runtime-side.ts) registered as a one-socket listener, through (a) one relay, listener and SDK straight to it — relay-hop's "toolrelay (cloud backend)"; (b) another single relay with listener and SDK through a round-robin TCP balancer (its own process, bench/processes/balancer-side.ts over integration/support/round-robin-proxy.ts); (c) and (d) three relay nodes (bench/processes/cluster-side.ts, \`cluster: { servers, nodeId, leaseTtlMs: ${config.leaseTtlMs} }\`, each its own process, same options as the single relays otherwise: one-socket listener mode, heartbeat off) on one \`nats-server -js\` (integration/support/nats-servers.ts), listener and SDK through the balancer. The listener's socket lands on one node, which takes the lease; the holder is read from the \`toolrelay_leases\` bucket and the balancer's targets are set so that (c)'s SDK sockets go to the holder and (d)'s to the two other nodes, which pipe them to the holder (checked: the holder reports the listener and both sessions, the others hold no copy; this run: ${holder.nodeId} held it, SDK connections per node ${placement}).`,
        `${config.rounds} interleaved rounds × ${config.iterationsPerRound} sequential round trips per client after ${config.warmupIterations} warm-up; throughput ${config.throughputRounds} batches of ${config.throughputCalls} with ${config.inFlight} in flight. Then, on a scratch bucket from the bench process, ${config.kvProbeWrites} KV creates one at a time (each followed by its delete; timed: the write the holder awaits before it delivers each call) and ${config.kvProbeWrites} create+delete pairs with ${config.inFlight} in flight (rate). The calls bucket held ${callsBucket.values} entries (delete markers included) after the run.`,
      ],
      seconds: seconds(),
      details: {
        latencyMicros: lat,
        loadedLatencyMicros: underLoad,
        ratesPerSecond: Object.fromEntries(rates),
        kvCreateMicros: kvProbe,
        kvOverlappedCreatesPerSecond: kvOverlapped,
        holder: holder.nodeId,
        holderAfter,
        placement,
        callsBucketEntries: callsBucket.values,
      },
    };
  } finally {
    for (const client of clients.reverse()) await client.close().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    for (const child of children.reverse()) await child.stop();
    await nats?.stop();
  }
}
