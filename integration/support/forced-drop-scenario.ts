/**
 * The live relay suite's workload, shared by integration/cloud-live-relay.test.ts and the soak
 * script (scripts/soak-cloud.ts): a ledger tool that appends one line per execution, 4
 * conversations × 5 turns of one call each (20 calls, 4 at a time), and the forced-drop scenario
 * (2 SDK socket drops and 1 listener reconnect while calls run).
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  createSession,
  defineTool,
  type Session,
  type SessionOptions,
  type ToolCallEndEvent,
  type TurnResult,
} from "../../packages/toolrelay/src/index.js";
import { RELAY_API_KEY, type CloudStack } from "./cloud-stack.js";

/** A folder for ledgers; remove it with `removeLedgers()`. */
const scratch = mkdtempSync(join(tmpdir(), "toolrelay-ledger-"));

export function removeLedgers(): void {
  rmSync(scratch, { recursive: true, force: true });
}

/** A file with one line per tool execution: a repeated line is a duplicate side effect. */
export function ledger(name: string) {
  const path = join(scratch, `${name}.ledger`);
  appendFileSync(path, "");
  return {
    path,
    rows: () => readFileSync(path, "utf8").split("\n").filter(Boolean),
  };
}

export function ledgerTool(path: string, options: { delayMs?: number; timeoutMs?: number } = {}) {
  return defineTool({
    name: "ledger_append",
    description: "Append one row to the ledger",
    inputSchema: z.object({ row: z.string().describe("The row to append") }),
    timeoutMs: options.timeoutMs,
    async execute({ row }) {
      appendFileSync(path, `${row}\n`);
      await new Promise((resolve) => setTimeout(resolve, options.delayMs ?? 0));
      return `appended ${row}`;
    },
  });
}

export function cloudOptions(stack: CloudStack, extra: Partial<SessionOptions>): SessionOptions {
  return {
    backend: {
      kind: "cloud",
      apiKey: RELAY_API_KEY,
      baseUrl: stack.relayUrl,
      environment: { name: stack.envName },
      pingIntervalMs: 2_000,
      pongTimeoutMs: 4_000,
      backoff: { initialDelayMs: 20, maxDelayMs: 500 },
    },
    agent: { create: { model: stack.modelHandle, name: "toolrelay-live" } },
    conversation: "new",
    reconnectGraceMs: 15_000,
    requestTimeoutMs: 30_000,
    turnStallProbeMs: 2_000,
    ...extra,
  };
}

export const directive = (row: string) => `CALL ledger_append {"row":"${row}"}`;

/** 4 conversations of one agent, 5 turns each, the 4 conversations concurrently: 20 tool calls. */
export async function twentyCalls(stack: CloudStack, name: string, options: { delayMs: number; onStart?: (count: number) => void }) {
  const book = ledger(name);
  const started0 = Date.now();
  const trace: string[] = [];
  const note = (line: string) => trace.push(`${Date.now() - started0}ms ${line}`);
  const tool = ledgerTool(book.path, { delayMs: options.delayMs });
  const sessions: Session[] = [];
  const ends: ToolCallEndEvent[] = [];
  let starts = 0;
  try {
    const first = await createSession(cloudOptions(stack, { tools: [tool] }));
    sessions.push(first);
    for (let index = 1; index < 4; index++) {
      sessions.push(await createSession(cloudOptions(stack, { tools: [tool], agent: { id: first.agentId } })));
    }
    sessions.forEach((session, index) => {
      session.on("tool-call-end", (event) => {
        ends.push(event);
        note(`s${index} end ${event.outcome} ${event.requestIds.join(",")}`);
      });
      session.on("tool-call-start", (event) => {
        note(`s${index} start ${event.requestId}`);
        options.onStart?.(++starts);
      });
      session.on("tool-call-duplicate", (event) => note(`s${index} duplicate ${event.disposition} ${event.requestId}`));
      session.on("connection-state-change", (event) => note(`s${index} ${event.previous} -> ${event.state}`));
      session.on("error", (error) => note(`s${index} error ${error.code} ${error.message}`));
    });
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `the 20 calls did not finish within 60 s; trace:\n${trace.join("\n")}\n--- relay ---\n${stack.relayOutput().slice(-6_000)}`,
            ),
          ),
        60_000,
      );
    });
    const results = await Promise.race([
      stalled,
      Promise.all(
        sessions.map(async (session, conversation) => {
          const turns: TurnResult[] = [];
          for (let turn = 0; turn < 5; turn++) {
            note(`s${conversation} send t${turn}`);
            const running = session.send(directive(`${name}-c${conversation}-t${turn}`));
            for await (const event of running)
              note(`s${conversation} t${turn} ${event.type}${event.type === "stop" ? ` ${event.stopReason}` : ""}`);
            turns.push(await running.result);
          }
          return turns;
        }),
      ),
    ]).finally(() => clearTimeout(timer));
    return { results: results.flat(), ends, rows: book.rows(), durationMs: Date.now() - started, sessions };
  } finally {
    for (const session of sessions) await session.close();
  }
}

/** Outcomes a settled call may have. */
export const SETTLED_OUTCOMES = ["ok", "tool-error", "timeout", "cancelled", "disconnected"];

/**
 * 20 calls as in {@link twentyCalls}, with 2 forced SDK socket drops (at the 3rd and 13th call
 * start) and 1 listener reconnect (at the 8th), all while calls run.
 */
export async function forcedDropRun(stack: CloudStack, name: string) {
  const faults: Array<Promise<unknown>> = [];
  const connectionId = await stack.connectionId();
  const run = await twentyCalls(stack, name, {
    delayMs: 400,
    onStart: (count) => {
      const inject = (fault: Promise<unknown>) => {
        fault.catch(() => undefined); // awaited below; never unhandled if the run ends early
        faults.push(fault);
      };
      if (count === 3 || count === 13) inject(stack.hook("drop-sdk-sockets", { connectionId, code: 1012, reason: "forced drop" }));
      if (count === 8) inject(stack.hook("close-listener", { connectionId, code: 1012, reason: "forced listener reconnect" }));
    },
  });
  await Promise.all(faults);
  return { ...run, faults: faults.length };
}
