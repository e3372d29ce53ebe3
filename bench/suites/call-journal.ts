/**
 * Benchmark 11: what the call journal (issue 28) costs per call, against the call table without
 * one, measured in the same run. Everything but the NATS server is in this process: a
 * `CallTable` whose one tool answers at once, and a request per call (a new request id, the same
 * tool call id `call_0` as a provider reuses it, a small input). A call's time runs from
 * `request()` to its response reaching the table's output: with a journal that is a `find`, a
 * `start` that resolves once durable, the callback, and the response (its `settle` is written
 * after the answer goes out, so it does not delay it, but it is in the throughput).
 *
 * Candidates: no journal (the baseline), `MemoryCallJournal`, the file journal with fsync (the
 * default) and without it, and the NATS KV journal against one local `nats-server -js` (file
 * storage). Rounds are interleaved across candidates, so drift hits each alike. Two measures:
 * latency of calls one after another (p50, p99), and throughput with 64 calls in flight.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServers, type NatsServers } from "../../integration/support/nats-servers.js";
import { CallTable, inputDigest, MemoryCallJournal, type CallJournal, type CallRequest } from "../../packages/toolrelay/src/calls/index.js";
import { canonicalJson } from "../../packages/toolrelay/src/internal/canonical-json.js";
import { openFileCallJournal } from "../../packages/toolrelay/src/journal/index.js";
import { openNatsCallJournal } from "../../packages/toolrelay/src/nats-journal/index.js";
import { defineTool, type ClientTool } from "../../packages/toolrelay/src/tools/index.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { formatMicros, formatRate, ratio, rotate, summarize } from "../harness/stats.js";

export interface CallJournalConfig {
  rounds: number;
  /** Calls per round, one after another (latency). */
  sequentialCalls: number;
  /** Calls per round with {@link CallJournalConfig.inFlight} in flight (throughput). */
  concurrentCalls: number;
  inFlight: number;
}

export const fullCallJournalConfig: CallJournalConfig = { rounds: 7, sequentialCalls: 400, concurrentCalls: 2_000, inFlight: 64 };
export const quickCallJournalConfig: CallJournalConfig = { rounds: 1, sequentialCalls: 20, concurrentCalls: 100, inFlight: 16 };

const SECTION = "11. Call journal";
const BASELINE = "no journal";

interface Candidate {
  name: string;
  journal: CallJournal | undefined;
}

/** A table over `journal` whose tool answers at once; `call()` resolves when the response is written. */
function tableWith(journal: CallJournal | undefined) {
  const waiting = new Map<string, () => void>();
  const tool: ClientTool = defineTool({
    name: "pay",
    description: "answers at once",
    inputSchema: { type: "object", properties: { seat: { type: "integer" } } },
    execute: ({ seat }) => `paid ${String(seat)}`,
  });
  const table = new CallTable({
    journal,
    output: {
      response(_record, requestId) {
        waiting.get(requestId)?.();
        waiting.delete(requestId);
        return 1;
      },
      start: () => undefined,
      end: () => undefined,
      late: () => undefined,
      progress: () => undefined,
    },
  });
  let next = 0;
  const run = `${process.pid}-${Date.now()}`;
  return (): Promise<void> => {
    const seat = next++;
    const requestId = `external-tool-${run}-${seat}`;
    const input = { seat };
    const canonical = canonicalJson(input);
    const request: CallRequest = {
      requestId,
      epoch: 1,
      connectionId: "bench",
      agentId: "agent-bench",
      conversationId: "conversation-bench",
      toolCallId: "call_0",
      inputDigest: inputDigest(canonical),
      toolName: "pay",
      tool,
      tools: { names: () => ["pay"] },
      input,
      inputBytes: canonical.length,
    };
    return new Promise<void>((resolve) => {
      waiting.set(requestId, resolve);
      table.request(request);
    });
  };
}

async function sequential(call: () => Promise<void>, count: number): Promise<number[]> {
  const micros: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = process.hrtime.bigint();
    await call();
    micros.push(Number(process.hrtime.bigint() - started) / 1_000);
  }
  return micros;
}

async function concurrent(call: () => Promise<void>, count: number, inFlight: number): Promise<number> {
  let issued = 0;
  const started = process.hrtime.bigint();
  const lane = async () => {
    while (issued < count) {
      issued++;
      await call();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return count / (Number(process.hrtime.bigint() - started) / 1e9);
}

export async function runCallJournal(config: CallJournalConfig, log: Log): Promise<SuiteResult> {
  const started = performance.now();
  const folder = mkdtempSync(join(tmpdir(), "toolrelay-bench-journal-"));
  let nats: NatsServers | undefined;
  const candidates: Candidate[] = [{ name: BASELINE, journal: undefined }];
  try {
    candidates.push({ name: "memory", journal: new MemoryCallJournal() });
    candidates.push({ name: "file (fsync)", journal: await openFileCallJournal({ path: join(folder, "fsync.journal") }) });
    candidates.push({
      name: "file (no fsync)",
      journal: await openFileCallJournal({ path: join(folder, "nofsync.journal"), fsync: false }),
    });
    try {
      nats = await startNatsServers({ count: 1 });
      candidates.push({ name: "NATS KV", journal: await openNatsCallJournal({ servers: nats.urls, bucket: "bench_calls" }) });
    } catch (error) {
      log(`call-journal: NATS KV left out: ${error instanceof Error ? error.message : String(error)}`);
    }
    const calls = new Map(candidates.map((candidate) => [candidate.name, tableWith(candidate.journal)]));
    const latency = new Map<string, number[]>(candidates.map((candidate) => [candidate.name, []]));
    const throughput = new Map<string, number[]>(candidates.map((candidate) => [candidate.name, []]));
    for (const call of calls.values()) await sequential(call, Math.min(50, config.sequentialCalls)); // warm up
    for (let round = 0; round < config.rounds; round++) {
      for (const name of rotate([...calls.keys()], round)) {
        const call = calls.get(name)!;
        latency.get(name)!.push(...(await sequential(call, config.sequentialCalls)));
        throughput.get(name)!.push(await concurrent(call, config.concurrentCalls, config.inFlight));
      }
      log(`call-journal: round ${round + 1}/${config.rounds}`);
    }
    const base = summarize(latency.get(BASELINE)!);
    const baseRate = summarize(throughput.get(BASELINE)!).p50;
    const rows: ResultRow[] = [];
    for (const { name } of candidates) {
      if (name === BASELINE) continue;
      const figures = summarize(latency.get(name)!);
      const rate = summarize(throughput.get(name)!).p50;
      rows.push(
        {
          section: SECTION,
          measure: "call latency p50 (one after another)",
          baselineName: BASELINE,
          baselineValue: formatMicros(base.p50),
          candidateName: name,
          candidateValue: formatMicros(figures.p50),
          ratio: ratio(figures.p50, base.p50),
          note: `p99 ${formatMicros(figures.p99)} (baseline ${formatMicros(base.p99)})`,
        },
        {
          section: SECTION,
          measure: `throughput (${config.inFlight} in flight)`,
          baselineName: BASELINE,
          baselineValue: formatRate(baseRate),
          candidateName: name,
          candidateValue: formatRate(rate),
          ratio: ratio(rate, baseRate),
        },
      );
    }
    return {
      name: "call-journal",
      rows,
      notes: [
        "**Call journal** (benchmark 11): a `CallTable` in this process whose tool answers at once; per call, from `request()` to the response written. " +
          `${config.rounds} interleaved rounds of ${config.sequentialCalls} calls one after another and ${config.concurrentCalls} with ${config.inFlight} in flight. ` +
          "With a journal a call is looked up, its start is written and made durable before the callback runs, and its settlement is written after the answer goes out. " +
          "The file journal groups the writes of one tick into one write and one fsync; NATS KV is one local `nats-server -js` with file storage.",
      ],
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    for (const { journal } of candidates) await journal?.close().catch(() => undefined);
    await nats?.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}
