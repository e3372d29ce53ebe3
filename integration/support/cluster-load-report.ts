/**
 * What one load run against the relay cluster (cluster-load.ts) reports: its options, the report
 * itself, how every request the listener wrote is sorted into the report's classes (answered once,
 * written twice, duplicates, stranded, pre-acknowledgement losses), and the one-line description
 * the test and the soak print.
 */
import type { ClusterStack } from "./cluster-stack.js";
import type { LoadListener } from "./load-listener.js";
import type { LoadSdkClient } from "./load-sdk-client.js";

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

/** Sorts every request the listener wrote into the report's classes. */
export function classify(run: {
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
