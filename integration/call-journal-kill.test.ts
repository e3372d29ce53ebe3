/**
 * Exactly once across a restart (issue 28), on the CLOUD path: the scripted model and the reference
 * relay in this process, the REAL Letta Code listener as a process, and the SDK as its own process
 * (integration/support/journal-kill-sdk.ts) that the test kills with SIGKILL.
 *
 * Life 1 runs `count` non-idempotent `pay` calls, one per conversation; every execution appends a
 * ledger row. Its link to the relay is cut; the even seats finish while it is down (their answers
 * are held, their settlements written to the journal); the odd seats are still running. Then
 * `kill -9`. Life 2, a new process with the same journal, opens a session on each conversation; the
 * relay re-offers every unanswered call to it. With a journal: **0 second executions** (the ledger
 * has `count` rows, all from life 1), each even seat is answered with its stored response and each
 * odd seat with "outcome unknown", and every conversation's turn continues (the model gets the
 * answer). Without one (the control), life 2 runs every call again.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outcomeUnknownText } from "../packages/toolrelay/src/calls/index.js";
import type { ModelScript } from "../test/support/scripted-model-server.js";
import { startHalfOpenProxy } from "../test/transport/half-open-proxy.js";
import { until } from "../test/support/wait.js";
import { startCloudFaultStack, type CloudFaultStack } from "./support/cloud-fault-stack.js";
import type { JournalKillConfig } from "./support/journal-kill-sdk.js";
import { startNatsServers, type NatsServers } from "./support/nats-servers.js";
import { startTsxProcess, type TsxProcess } from "./support/tsx-process.js";

/** Calls running at the kill (one conversation each). `JOURNAL_KILL_CALLS` overrides. */
const COUNT = Number(process.env.JOURNAL_KILL_CALLS ?? 50);
const CHILD = new URL("./support/journal-kill-sdk.ts", import.meta.url).pathname;
const API_KEY = "journal-kill-key";
const ENV_NAME = "toolrelay-journal-kill";

const script: ModelScript = (request) => {
  if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
  const seat = /pay seat (\d+)/.exec(request.lastUserText)?.[1];
  if (seat !== undefined) return { toolCalls: [{ id: "call_0", name: "pay", arguments: { seat: Number(seat) } }] };
  return { text: "pong" };
};

interface LedgerRow {
  life: number;
  pid: number;
  seat: number;
  key: string;
}

interface Run {
  ledger: LedgerRow[];
  /** seat → the tool result text the model got after the restart. */
  answers: Map<number, string>;
  /** Life 2's `tool-call-end` outcomes. */
  outcomes: string[];
}

function jsonLines(process: TsxProcess): Array<Record<string, unknown>> {
  return process.lines.flatMap((line) => {
    try {
      const value = JSON.parse(line) as unknown;
      return typeof value === "object" && value !== null ? [value as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}

describe("call journal: kill -9 of the SDK process while calls run (cloud path, real listener)", () => {
  let stack: CloudFaultStack;
  let nats: NatsServers | undefined;
  const folders: string[] = [];
  beforeAll(async () => {
    stack = await startCloudFaultStack({
      envName: ENV_NAME,
      apiKey: API_KEY,
      script,
      // A session that left is forgotten after 500 ms; its unanswered calls wait for the next one.
      relay: { heartbeatIntervalMs: 0, sdkResumeWindowMs: 500, unownedCallTimeoutMs: 240_000 },
    });
  }, 90_000);
  afterAll(async () => {
    await nats?.stop();
    await stack?.stop();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  async function killAndRestart(journal: (folder: string) => JournalKillConfig["journal"]): Promise<Run> {
    const folder = mkdtempSync(join(tmpdir(), "toolrelay-journal-kill-"));
    folders.push(folder);
    const proxy = await startHalfOpenProxy({ host: "127.0.0.1", port: Number(new URL(stack.relay.httpUrl).port) });
    const base: JournalKillConfig = {
      life: 1,
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      apiKey: API_KEY,
      envName: ENV_NAME,
      modelHandle: stack.model.modelHandle,
      journal: journal(folder),
      ledgerPath: join(folder, "ledger.jsonl"),
      conversationsPath: join(folder, "conversations.json"),
      finishPath: join(folder, "finish"),
      count: COUNT,
    };
    writeFileSync(base.ledgerPath, "");
    const ledger = () =>
      readFileSync(base.ledgerPath, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as LedgerRow);

    const lifeOne = startTsxProcess(CHILD, [], { JOURNAL_KILL_CONFIG: JSON.stringify(base) });
    let lifeTwo: TsxProcess | undefined;
    try {
      await lifeOne.waitForLine(/"(ready|fatal)"/, 180_000);
      expect(jsonLines(lifeOne).filter((line) => "fatal" in line)).toEqual([]);
      await until(
        () => ledger().length === COUNT,
        () => `life 1 runs ${COUNT} calls (ledger: ${ledger().length})`,
        120_000,
      );

      // The link goes down; the even seats finish meanwhile (held answers, settlements in the journal).
      await proxy.close();
      writeFileSync(base.finishPath, "");
      const evens = Math.ceil(COUNT / 2);
      const settledLines = () => jsonLines(lifeOne).filter((line) => (base.journal.kind === "none" ? "end" in line : "durable" in line));
      await until(
        () => settledLines().length === evens,
        () => `${evens} calls settle (${settledLines().length})`,
        60_000,
      );
      expect(jsonLines(lifeOne).filter((line) => "end" in line && line.outcome !== "ok")).toEqual([]);

      // kill -9: no close, no flush.
      process.kill(lifeOne.pid, "SIGKILL");
      await lifeOne.stop();

      const fromIndex = stack.model.requests.length;
      lifeTwo = startTsxProcess(CHILD, [], { JOURNAL_KILL_CONFIG: JSON.stringify({ ...base, life: 2, baseUrl: stack.relay.httpUrl }) });
      const answers = new Map<number, string>();
      const collect = () => {
        for (const request of stack.model.requests.slice(fromIndex)) {
          if (request.lastMessage?.role !== "tool") continue;
          const seat = Number(/pay seat (\d+)/.exec(request.lastUserText)?.[1]);
          answers.set(seat, request.toolResults.map((result) => result.text).join("\n"));
        }
        return answers.size;
      };
      await until(
        () => collect() === COUNT,
        () =>
          `every turn continues after the restart (${collect()}/${COUNT}); life 2: ${lifeTwo!.output().slice(-3_000)}\nlistener: ${stack.listener.stdoutLines
            .filter((line) => /external_tool|turn_finished|input_accepted/.test(line))
            .slice(-12)
            .map((line) => line.slice(0, 300))
            .join("\n")}`,
        Number(process.env.JOURNAL_KILL_WAIT_MS ?? 180_000),
      );
      expect(jsonLines(lifeTwo).filter((line) => "fatal" in line)).toEqual([]);
      const outcomes = jsonLines(lifeTwo)
        .filter((line) => "end" in line)
        .map((line) => String(line.outcome));
      return { ledger: ledger(), answers, outcomes };
    } finally {
      await lifeOne.stop();
      await lifeTwo?.stop();
      await proxy.close().catch(() => undefined);
    }
  }

  function expectExactlyOnce(run: Run): void {
    const seats = Array.from({ length: COUNT }, (_, seat) => seat);
    // 0 second executions: one ledger row per call, all from the killed process.
    expect(run.ledger.map((row) => row.seat).sort((a, b) => a - b)).toEqual(seats);
    expect(new Set(run.ledger.map((row) => row.life))).toEqual(new Set([1]));
    expect(new Set(run.ledger.map((row) => row.key)).size).toBe(COUNT);
    // Every call answered: the stored response (byte for byte what life 1 would have sent), or outcome unknown.
    for (const seat of seats) {
      // The runtime puts its own prefix before an `error` answer.
      const unknown = `External tool execution error: ${outcomeUnknownText("pay", "started")}`;
      expect(run.answers.get(seat), `seat ${seat}`).toBe(seat % 2 === 0 ? `paid seat ${seat}` : unknown);
    }
    expect(run.outcomes.filter((kind) => kind === "recorded")).toHaveLength(Math.ceil(COUNT / 2));
    expect(run.outcomes.filter((kind) => kind === "outcome-unknown")).toHaveLength(Math.floor(COUNT / 2));
  }

  it(`file journal: ${COUNT} calls, kill -9, restart with the same file: 0 second executions, every call answered`, async () => {
    expectExactlyOnce(await killAndRestart((folder) => ({ kind: "file", path: join(folder, "calls.journal") })));
  }, 600_000);

  it(`NATS KV journal: the same, the restart on another process`, async () => {
    nats = await startNatsServers({ count: 1 });
    expectExactlyOnce(await killAndRestart(() => ({ kind: "nats", servers: nats!.urls, bucket: "journal_kill" })));
  }, 600_000);

  it("the control: without a journal the restarted process runs every call again", async () => {
    const run = await killAndRestart(() => ({ kind: "none" }));
    expect(run.ledger.filter((row) => row.life === 2)).toHaveLength(COUNT);
    for (let seat = 0; seat < COUNT; seat++) expect(run.answers.get(seat)).toBe(`paid seat ${seat} (again, life 2)`);
  }, 600_000);
});
