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
 * each client cut by it got afterwards (G2), and refused reconnect upgrades (G6).
 */
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import type { ClusterNode, ClusterStack } from "./cluster-stack.js";
import { CLUSTER_API_KEY } from "./cluster-stack.js";
import { LoadListener, type OpenThrough } from "./load-listener.js";
import { LoadSdkClient } from "./load-sdk-client.js";

export type LoadKill = "holder" | "sdk-entry" | "listener-entry" | "nats-leader" | "none";

export interface ClusterLoadOptions {
  stack: ClusterStack;
  calls: number;
  /** SDK clients, one runtime each. Default 10. */
  runtimes?: number;
  kill: LoadKill;
  seed: number;
  /** The SDK's rule (true) or the control that runs every delivery (false). Default true. */
  dedupe?: boolean;
  /** Over how long the calls are sent. Default 2,000 ms. */
  spreadMs?: number;
  /** Client reconnects to force while the calls are sent (G6): TCP cuts from the client side, and now and then the holder's drop-sdk-sockets hook. */
  forcedReconnects?: number;
  /** Give up after this long without progress. Default 30 s. */
  stallTimeoutMs?: number;
  /** Stop waiting early when nothing moved for this long and every unanswered request is held by nobody (no delivery, no record). Default 3 s. */
  settleMs?: number;
}

export interface ClusterLoadReport {
  kill: LoadKill;
  seed: number;
  dedupe: boolean;
  calls: number;
  runtimes: number;
  /** The node (or NATS server) killed, and when (ms after the first call). */
  killed: string | undefined;
  killAtMs: number | undefined;
  holderBefore: string | undefined;
  holderAfter: string | undefined;
  written: number;
  /** Request ids delivered to a client at least once. */
  delivered: number;
  executions: number;
  /** Request ids run more than once, and the runs beyond the first. */
  duplicates: number;
  extraExecutions: number;
  answeredOnce: number;
  writtenTwice: number;
  /** Answers the relay wrote itself (an error: no owner within the timeout, over a cap). */
  relayErrors: number;
  /** Answers whose text is not the call's own. */
  wrongAnswers: number;
  unanswered: number;
  stranded: number;
  strandedIds: string[];
  /** Per stranded request, in ms from the kill: when the listener wrote it, when a client last answered it. */
  strandedDetails: Array<{
    requestId: string;
    writtenMs: number;
    deliveries: number;
    runs: number;
    answeredMs: number | undefined;
    recorded: boolean;
  }>;
  preAckLosses: number;
  preAckIds: string[];
  /** When the pre-ack losses were written, in ms after the kill (earliest, latest). */
  preAckWrittenMs: [number, number] | undefined;
  /** Requests the listener's runtime rejected (it was closed with 1008 or replaced). */
  rejected: number;
  /** Answered calls whose record stayed in the bucket. */
  leftoverRecords: number;
  /** G2: per client cut by the kill (or forced), ms from the kill to its first frame on a new connection. */
  firstFrameMs: number[];
  clientsCutWithoutFrame: number;
  /** Delivery delay: from the listener's write to the first delivery to a client, p50 / p99 / max over the delivered requests. */
  deliveryMs: { p50: number; p99: number; max: number } | undefined;
  /** G6: written requests never answered, and `seq` numbers skipped inside a session. */
  framesLost: number;
  seqGaps: number;
  forcedReconnects: number;
  clientReconnects: number;
  listenerReconnects: number;
  listenerCloseCodes: number[];
  /** Refused SDK upgrades by HTTP status. */
  refusals: Record<string, number>;
  /** Connections the balancer accepted per node during the run. */
  entries: Record<string, number>;
  /** Where each socket of the first connections entered (node ids). */
  socketEntries: Record<string, string>;
  durationMs: number;
}

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

/** Sorts every request the listener wrote into the report's classes. */
function classify(run: {
  options: ClusterLoadOptions & { runtimes: number; dedupe: boolean };
  listener: LoadListener;
  clients: LoadSdkClient[];
  recorded: Set<string>;
  killAt: number | undefined;
  started: number;
}): Omit<
  ClusterLoadReport,
  "killed" | "killAtMs" | "holderBefore" | "holderAfter" | "forcedReconnects" | "entries" | "socketEntries" | "durationMs"
> {
  const { options, listener, clients, recorded } = run;
  let written = 0;
  let delivered = 0;
  let executions = 0;
  let duplicates = 0;
  let extraExecutions = 0;
  let answeredOnce = 0;
  let writtenTwice = 0;
  let relayErrors = 0;
  let wrongAnswers = 0;
  let unanswered = 0;
  let preAckLosses = 0;
  let rejected = 0;
  let leftoverRecords = 0;
  const strandedIds: string[] = [];
  const strandedDetails: ClusterLoadReport["strandedDetails"] = [];
  const preAckWritten: number[] = [];
  const preAckIds: string[] = [];
  const deliveryDelays: number[] = [];
  for (const request of listener.requests.values()) {
    if (request.writtenAt !== undefined) written++;
    const firstAt = Math.min(...clients.map((client) => client.deliveries.get(request.requestId)?.firstAt ?? Infinity));
    if (request.writtenAt !== undefined && Number.isFinite(firstAt)) deliveryDelays.push(firstAt - request.writtenAt);
    const deliveries = clients.reduce((sum, client) => sum + (client.deliveries.get(request.requestId)?.deliveries ?? 0), 0);
    const runs = clients.reduce((sum, client) => sum + (client.executions.get(request.requestId) ?? 0), 0);
    if (deliveries > 0) delivered++;
    executions += runs;
    if (runs > 1) {
      duplicates++;
      extraExecutions += runs - 1;
    }
    const answers = request.responses.length;
    if (answers === 1) answeredOnce++;
    if (answers > 1) writtenTwice++;
    if (request.responses.some((response) => response.error !== undefined)) relayErrors++;
    if (request.responses.some((response) => response.error === undefined && response.text !== `echo ${request.toolCallId}`))
      wrongAnswers++;
    if (answers > 0) {
      if (recorded.has(request.requestId)) leftoverRecords++;
      continue;
    }
    unanswered++;
    if (request.rejectedAt !== undefined) rejected++;
    if (request.writtenAt === undefined) continue; // never written: `written` says so
    if (deliveries > 0 || recorded.has(request.requestId)) {
      strandedIds.push(request.requestId);
      const from = run.killAt ?? run.started;
      const answeredAt = Math.max(0, ...clients.map((client) => client.deliveries.get(request.requestId)?.answeredAt ?? 0));
      strandedDetails.push({
        requestId: request.requestId,
        writtenMs: request.writtenAt - from,
        deliveries,
        runs,
        answeredMs: answeredAt > 0 ? answeredAt - from : undefined,
        recorded: recorded.has(request.requestId),
      });
    } else {
      preAckLosses++;
      preAckIds.push(request.requestId);
      if (run.killAt !== undefined) preAckWritten.push(request.writtenAt - run.killAt);
    }
  }
  const firstFrameMs: number[] = [];
  let clientsCutWithoutFrame = 0;
  const from = run.killAt ?? run.started;
  for (const client of clients) {
    if (!client.lostAt.some((at) => at >= from)) continue;
    if (run.killAt === undefined) continue; // forced reconnects: G6 counts frames, not delays
    const delay = client.firstFrameAfter(run.killAt);
    if (delay === undefined) clientsCutWithoutFrame++;
    else firstFrameMs.push(delay);
  }
  const refusals: Record<string, number> = {};
  for (const client of clients) for (const [status, count] of client.refusals) refusals[status] = (refusals[status] ?? 0) + count;
  const writtenUnanswered = [...listener.requests.values()].filter(
    (request) => request.writtenAt !== undefined && request.responses.length === 0,
  ).length;
  return {
    kill: options.kill,
    seed: options.seed,
    dedupe: options.dedupe,
    calls: options.calls,
    runtimes: options.runtimes,
    written,
    delivered,
    executions,
    duplicates,
    extraExecutions,
    answeredOnce,
    writtenTwice,
    relayErrors,
    wrongAnswers,
    unanswered,
    stranded: strandedIds.length,
    strandedIds,
    strandedDetails,
    preAckLosses,
    preAckIds,
    preAckWrittenMs: preAckWritten.length > 0 ? [Math.min(...preAckWritten), Math.max(...preAckWritten)] : undefined,
    rejected,
    leftoverRecords,
    firstFrameMs,
    clientsCutWithoutFrame,
    deliveryMs:
      deliveryDelays.length > 0
        ? { p50: percentile(deliveryDelays, 50)!, p99: percentile(deliveryDelays, 99)!, max: Math.max(...deliveryDelays) }
        : undefined,
    framesLost: writtenUnanswered,
    seqGaps: clients.reduce((sum, client) => sum + client.seqGaps, 0),
    clientReconnects: clients.reduce((sum, client) => sum + client.epoch - 1, 0),
    listenerReconnects: listener.connections - 1,
    listenerCloseCodes: [...listener.closeCodes],
    refusals,
  };
}

/** `p` (0–100) of `values`, nearest rank; undefined when empty. */
export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** One line of figures for a report (the test prints it; the soak prints a table of them). */
export function describeLoadReport(report: ClusterLoadReport): string {
  const worst = report.firstFrameMs.length > 0 ? Math.max(...report.firstFrameMs) : undefined;
  return [
    `kill=${report.kill}${report.killed ? `(${report.killed}@${report.killAtMs}ms)` : ""}`,
    `seed=${report.seed}`,
    `dedupe=${report.dedupe}`,
    `written=${report.written}/${report.calls}`,
    `delivered=${report.delivered}`,
    `executions=${report.executions}`,
    `duplicates=${report.duplicates}(+${report.extraExecutions})`,
    `answeredOnce=${report.answeredOnce}`,
    `writtenTwice=${report.writtenTwice}`,
    `stranded=${report.stranded}`,
    `preAck=${report.preAckLosses}${report.preAckWrittenMs ? `(written ${report.preAckWrittenMs.join("..")}ms from the kill)` : ""}`,
    `relayErrors=${report.relayErrors}`,
    `wrong=${report.wrongAnswers}`,
    `leftover=${report.leftoverRecords}`,
    `g2max=${worst ?? "-"}ms(${report.firstFrameMs.length} clients, ${report.clientsCutWithoutFrame} without)`,
    `delivery=${report.deliveryMs ? `${report.deliveryMs.p50}/${report.deliveryMs.p99}/${report.deliveryMs.max}ms(p50/p99/max)` : "-"}`,
    `framesLost=${report.framesLost}`,
    `seqGaps=${report.seqGaps}`,
    `reconnects=${report.clientReconnects}/listener ${report.listenerReconnects}`,
    `refusals=${JSON.stringify(report.refusals)}`,
    `holder=${report.holderBefore}->${report.holderAfter}`,
    `${report.durationMs}ms`,
  ].join(" ");
}
