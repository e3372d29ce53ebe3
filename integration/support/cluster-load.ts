/**
 * One load run against the relay cluster (issue 27, G1 / G2 / G3 / G6): a load listener
 * (`load-listener.ts`) and one load SDK client per runtime (`load-sdk-client.ts`) through the
 * stack's round-robin balancer, `calls` tool calls spread over ~2 s, and at ~30 % of them sent a
 * kill -9: of the node holding the environment (`holder`), of a node that holds it NOT but pipes
 * SDK sockets to it (`sdk-entry`), of one that pipes a socket of the listener's to it
 * (`listener-entry`), or of the JetStream leader of the calls bucket's stream (`nats-leader`, with
 * 3 NATS servers and R3) — or forced SDK reconnects (`forcedReconnects`).
 *
 * The report classifies every request the listener wrote: answered once / written twice,
 * executions (a request id run more than once is a duplicate), **stranded** (never answered, but
 * delivered to a client or still recorded in the `toolrelay_calls` bucket), **pre-ack losses**
 * (never answered, never delivered, no record: written into a listener socket that died before the
 * relay made it durable — the one bounded loss class), the time from the kill to the first frame
 * each client cut by it got afterwards (G2), and refused reconnect upgrades (G6). The report and
 * its classes: cluster-load-report.ts.
 */
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import type { ClusterNode, ClusterStack } from "./cluster-stack.js";
import { CLUSTER_API_KEY } from "./cluster-stack.js";
import { LoadListener, type OpenThrough } from "./load-listener.js";
import { LoadSdkClient } from "./load-sdk-client.js";
import { type ClusterLoadOptions, type ClusterLoadReport, classify } from "./cluster-load-report.js";

/** mulberry32: a small seeded random source in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens sockets one at a time and reads from the balancer's counters which node each went to. */
class EntryTracker {
  readonly entries: Record<string, string> = {};
  #stack: ClusterStack;
  #chain: Promise<void> = Promise.resolve();

  constructor(stack: ClusterStack) {
    this.#stack = stack;
  }

  readonly openThrough: OpenThrough = async (role, open) => {
    const previous = this.#chain;
    let release = () => {};
    this.#chain = new Promise((resolve) => {
      release = resolve;
    });
    await previous;
    try {
      const before = this.#stack.proxy.counts();
      const result = await open();
      const after = this.#stack.proxy.counts();
      const changed = Object.keys(after).filter((key) => after[key] !== before[key]);
      const node = changed.length === 1 ? this.#stack.nodes.find((candidate) => `127.0.0.1:${candidate.port}` === changed[0]) : undefined;
      if (node) this.entries[role] = node.nodeId;
      return result;
    } finally {
      release();
    }
  };

  /** Sockets per node: how many of the listener's, how many of SDK clients'. */
  perNode(): Map<string, { listener: number; sdk: number }> {
    const result = new Map<string, { listener: number; sdk: number }>();
    for (const [role, nodeId] of Object.entries(this.entries)) {
      const counts = result.get(nodeId) ?? { listener: 0, sdk: 0 };
      if (role.startsWith("listener")) counts.listener++;
      else counts.sdk++;
      result.set(nodeId, counts);
    }
    return result;
  }
}

/** The request ids the `toolrelay_calls` bucket still holds for `connectionId`. */
async function recordedCalls(stack: ClusterStack, connectionId: string): Promise<Set<string>> {
  const connection = await connect({ servers: stack.nats.urls, timeout: 5_000 });
  try {
    const kv = await new Kvm(connection).open("toolrelay_calls");
    for (let attempt = 0; ; attempt++) {
      try {
        const ids = new Set<string>();
        const keys: string[] = [];
        for await (const key of await kv.keys(`${connectionId}.>`)) keys.push(key);
        for (const key of keys) {
          const entry = await kv.get(key);
          if (entry?.operation !== "PUT") continue;
          const requestId = entry.json<{ requestId?: unknown }>().requestId;
          if (typeof requestId === "string") ids.add(requestId);
        }
        return ids;
      } catch (error) {
        if (attempt >= 10) throw error;
        await sleep(500);
      }
    }
  } finally {
    await connection.close();
  }
}

/**
 * Picks a live node that does not hold the environment and pipes sockets to it: for `sdk-entry`
 * one with SDK sockets (preferably none of the listener's), for `listener-entry` one with a
 * socket of the listener's.
 */
function entryNode(
  stack: ClusterStack,
  tracker: EntryTracker,
  holderId: string | undefined,
  kind: "sdk" | "listener",
): ClusterNode | undefined {
  const candidates = [...tracker.perNode()]
    .filter(([nodeId, counts]) => nodeId !== holderId && counts[kind] > 0)
    .sort(([, a], [, b]) => (kind === "sdk" ? a.listener - b.listener || b.sdk - a.sdk : b.listener - a.listener));
  const nodeId = candidates[0]?.[0];
  return stack.nodes.find((node) => node.nodeId === nodeId && !node.dead);
}

/** Forces one round of reconnects: a client's TCP cut, or (every fourth round) the holder's drop-sdk-sockets hook; how many clients it hit. */
async function forceReconnect(stack: ClusterStack, connectionId: string, clients: LoadSdkClient[], round: number, random: () => number) {
  const connected = clients.filter((client) => client.connected);
  if (connected.length === 0) return 0;
  if (round % 4 === 3) {
    const holder = await stack.holder(connectionId);
    if (holder && !holder.dead) {
      const response = await fetch(`${holder.url}/_relay/drop-sdk-sockets`, {
        method: "POST",
        headers: { authorization: `Bearer ${CLUSTER_API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ connectionId }),
      }).catch(() => undefined);
      const body = response?.ok ? ((await response.json()) as { dropped?: unknown }) : undefined;
      if (typeof body?.dropped === "number") return connected.length;
    }
  }
  connected[Math.floor(random() * connected.length)]!.cut();
  return 1;
}

/** Runs one load run and returns its report (see the module comment). Restarts what it killed before it returns. */
export async function runClusterLoad(options: ClusterLoadOptions): Promise<ClusterLoadReport> {
  const { stack, calls, kill, seed } = options;
  const runtimes = options.runtimes ?? 10;
  const dedupe = options.dedupe ?? true;
  const spreadMs = options.spreadMs ?? 2_000;
  const random = seededRandom(seed);
  const tracker = new EntryTracker(stack);
  const countsBefore = stack.proxy.counts();
  const natsVictim = kill === "nats-leader" ? await stack.nats.streamLeader("KV_toolrelay_calls") : undefined;
  const listener = await LoadListener.start({
    baseUrl: stack.url,
    apiKey: CLUSTER_API_KEY,
    connectionName: `load-${seed}`,
    openThrough: tracker.openThrough,
  });
  const { connectionId } = listener;
  const clients: LoadSdkClient[] = [];
  let killedNode: ClusterNode | undefined;
  try {
    for (let index = 0; index < runtimes; index++) {
      clients.push(
        await LoadSdkClient.start({
          wsBase: stack.url.replace(/^http/, "ws"),
          connectionId,
          apiKey: CLUSTER_API_KEY,
          agentId: `agent-${index}`,
          conversationId: `conv-${seed}-${index}`,
          dedupe,
          random: seededRandom(seed * 1_000 + index),
          openThrough: tracker.openThrough,
        }),
      );
    }
    const holderBefore = (await stack.holder(connectionId))?.nodeId;
    const started = Date.now();
    let killAt: number | undefined;
    let killed: string | undefined;
    let killing: Promise<void> | undefined;
    const killAfter = Math.ceil(calls * 0.3);
    const doKill = async () => {
      if (kill === "nats-leader") {
        killed = `nats ${natsVictim!.name}`;
        killAt = Date.now();
        await natsVictim!.kill();
        return;
      }
      const holder = await stack.holder(connectionId);
      const victim = kill === "holder" ? holder : entryNode(stack, tracker, holder?.nodeId, kill === "sdk-entry" ? "sdk" : "listener");
      if (!victim) throw new Error(`cluster load: no node to kill for ${kill} (entries ${JSON.stringify(tracker.entries)})`);
      killedNode = victim;
      killed = victim.nodeId;
      killAt = Date.now();
      await stack.kill(victim);
    };
    const forced = options.forcedReconnects ?? 0;
    let forcedDone = 0;
    let forcing: Promise<void> | undefined;
    if (forced > 0) {
      forcing = (async () => {
        const gap = Math.max(10, (spreadMs * 0.9) / Math.max(1, forced * 0.6));
        for (let round = 0; forcedDone < forced; round++) {
          await sleep(gap);
          forcedDone += await forceReconnect(stack, connectionId, clients, round, random);
        }
      })();
      forcing.catch(() => {}); // rethrown where it is awaited
    }
    for (let sent = 0; sent < calls; ) {
      const due = Math.min(calls, Math.ceil(((Date.now() - started) / spreadMs) * calls));
      for (; sent < due; sent++) {
        const client = clients[Math.floor(random() * clients.length)]!;
        listener.send({
          requestId: `external-tool-${seed}-${sent}`,
          toolCallId: `call-${seed}-${sent}`,
          agentId: client.agentId,
          conversationId: client.conversationId,
          input: { n: sent },
        });
        if (sent + 1 === killAfter && kill !== "none") {
          killing = doKill();
          killing.catch(() => {}); // rethrown where it is awaited, after the calls went out
        }
      }
      await sleep(10);
    }
    await killing;
    await forcing;
    await waitForSettlement(options, listener, clients, connectionId);
    const recorded = await recordedCalls(stack, connectionId);
    const holderAfter = (await stack.holder(connectionId))?.nodeId;
    const report = classify({
      options: { ...options, runtimes, dedupe },
      listener,
      clients,
      recorded,
      killAt,
      started,
    });
    const countsAfter = stack.proxy.counts();
    const entries: Record<string, number> = {};
    for (const [key, count] of Object.entries(countsAfter)) {
      const node = stack.nodes.find((candidate) => `127.0.0.1:${candidate.port}` === key);
      const delta = count - (countsBefore[key] ?? 0);
      if (delta > 0) entries[node?.nodeId ?? key] = (entries[node?.nodeId ?? key] ?? 0) + delta;
    }
    return {
      ...report,
      killed,
      killAtMs: killAt === undefined ? undefined : killAt - started,
      holderBefore,
      holderAfter,
      forcedReconnects: forcedDone,
      entries,
      socketEntries: { ...tracker.entries },
      durationMs: Date.now() - started,
    };
  } finally {
    listener.stop();
    for (const client of clients) client.stop();
    if (killedNode?.dead) await stack.restart(killedNode);
    if (natsVictim) await natsVictim.restart();
  }
}

/** Waits until every written request is answered (or rejected), then for a quiet second; or gives up as the options say. */
async function waitForSettlement(options: ClusterLoadOptions, listener: LoadListener, clients: LoadSdkClient[], connectionId: string) {
  const stallTimeoutMs = options.stallTimeoutMs ?? 30_000;
  const settleMs = options.settleMs ?? 3_000;
  const signature = () => {
    let total = 0;
    for (const request of listener.requests.values()) total += request.responses.length + (request.writtenAt === undefined ? 0 : 1);
    for (const client of clients) for (const delivery of client.deliveries.values()) total += delivery.deliveries;
    return total;
  };
  const open = () =>
    [...listener.requests.values()].filter((request) => request.responses.length === 0 && request.rejectedAt === undefined);
  let last = signature();
  let movedAt = Date.now();
  let doneAt: number | undefined;
  let checkedAt = 0;
  for (;;) {
    await sleep(50);
    const now = Date.now();
    const current = signature();
    if (current !== last) {
      last = current;
      movedAt = now;
    }
    const waiting = open();
    if (waiting.length === 0) {
      doneAt ??= now;
      if (now - movedAt >= 1_000 || now - doneAt >= 10_000) return;
      continue;
    }
    doneAt = undefined;
    if (now - movedAt >= stallTimeoutMs) return;
    // Nothing moved for a while: if no client and no record holds any of the open requests, they are pre-ack losses.
    if (now - movedAt >= settleMs && now - checkedAt >= 1_000 && listener.ready) {
      checkedAt = now;
      const delivered = (requestId: string) => clients.some((client) => client.deliveries.has(requestId));
      if (waiting.some((request) => delivered(request.requestId) || request.writtenAt === undefined)) continue;
      const recorded = await recordedCalls(options.stack, connectionId).catch(() => undefined);
      if (recorded && waiting.every((request) => !recorded.has(request.requestId))) return;
    }
  }
}
