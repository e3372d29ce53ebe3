/**
 * Runs soak conversations against a real runtime and checks, turn by turn, what a user relies on:
 *
 * - a turn resolves only after the runtime ended it: its final (text-only) reply was served before
 *   the turn resolved, and its text is exactly what the model said in that turn;
 * - each tool call of a model reply ran exactly once in that turn (a reused `call_0` too), and each
 *   `ok` call's `tool-result` carries that very run's answer;
 * - every tool call request the session saw was answered (close mid-burst included);
 * - events in order: one `stop`, last; no `tool-result` before its `tool-call`;
 * - no unhandled rejection or uncaught exception in this process.
 *
 * An aborted turn must end (`cancelled`, or `end_turn` when the runtime did not take the abort) and
 * the next turn must be right again.
 */
import { z } from "zod";
import {
  type ClientTool,
  defineTool,
  errorResult,
  type Session,
  type TurnEvent,
  type TurnResult,
} from "../../packages/toolrelay/src/index.js";
import { SOAK_TOOL, type SoakModel, soakMessage } from "./soak-model.js";
import { type ConversationPlan, planConversation, type PlanLimits } from "./soak-plan.js";

/** A tool's deadline in the soak: `timeout` and `ignore-signal` calls pass it. */
export const SOAK_TOOL_TIMEOUT_MS = 400;

export interface SoakCounts {
  conversations: number;
  turns: number;
  aborted: number;
  closedMidBurst: number;
  toolRuns: number;
  reusedIds: number;
  violations: string[];
}

export const emptyCounts = (): SoakCounts => ({
  conversations: 0,
  turns: 0,
  aborted: 0,
  closedMidBurst: 0,
  toolRuns: 0,
  reusedIds: 0,
  violations: [],
});

interface Execution {
  label: string;
  behavior: string;
  text: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Run one conversation: `open` makes its session with the given tools. Violations go to `counts`. */
export async function runConversation(
  index: number,
  seed: number,
  model: SoakModel,
  open: (tools: ClientTool[]) => Promise<Session>,
  counts: SoakCounts,
  limits?: PlanLimits,
): Promise<void> {
  const plan = planConversation(seed, limits);
  model.add(index, plan);
  const where = (turn: number) => `seed ${seed} (conversation ${index}) turn ${turn}`;
  const violation = (turn: number, what: string) => counts.violations.push(`${where(turn)}: ${what}`);
  const state = { turn: -1, executions: [] as Execution[][], trigger: undefined as (() => void) | undefined };
  const session = await open([soakTool(state, () => counts.toolRuns++)]);
  const seen = new Set<string>();
  const answered = new Set<string>();
  session.on("error", () => undefined);
  session.on("tool-call-start", (event) => seen.add(event.requestId));
  session.on("tool-call-reused", (event) => {
    seen.add(event.requestId);
    counts.reusedIds++;
  });
  session.on("tool-call-duplicate", (event) => seen.add(event.requestId));
  session.on("tool-call-refused", (event) => {
    seen.add(event.requestId);
    answered.add(event.requestId);
  });
  session.on("tool-call-end", (event) => {
    for (const id of event.requestIds) answered.add(id);
  });
  counts.conversations++;
  let closed = false;
  try {
    for (const [turnIndex, turnPlan] of plan.turns.entries()) {
      await sleep(turnPlan.pauseMs);
      state.turn = turnIndex;
      state.executions[turnIndex] = [];
      const turn = session.send(soakMessage(index, turnIndex));
      const events: TurnEvent[] = [];
      const iterated = (async () => {
        for await (const event of turn) events.push(event);
      })().catch(() => undefined);
      const triggerAt = turnPlan.abortAtCall ?? turnPlan.closeAtCall;
      state.trigger =
        triggerAt === undefined
          ? undefined
          : () => {
              if (state.executions[turnIndex]!.length !== triggerAt) return;
              if (turnPlan.abortAtCall !== undefined) void turn.abort();
              else void session.close();
            };
      counts.turns++;
      const budget = 30_000 + turnPlan.replies.reduce((sum, reply) => sum + reply.delayMs + reply.calls.length * 1_500, 0);
      const outcome = await settleWithin(turn.result, budget);
      await iterated;
      const resolvedAt = Date.now();
      if (outcome.kind === "timeout") {
        violation(turnIndex, `did not end within ${budget} ms`);
        break;
      }
      if (turnPlan.closeAtCall !== undefined) {
        counts.closedMidBurst++;
        closed = true;
        break;
      }
      if (outcome.kind === "rejected") {
        violation(turnIndex, `failed: ${String(outcome.error)}`);
        continue;
      }
      if (turnPlan.abortAtCall !== undefined) {
        counts.aborted++;
        if (!["cancelled", "end_turn"].includes(outcome.result.stopReason))
          violation(turnIndex, `aborted turn ended ${outcome.result.stopReason}`);
        checkOrder(outcome.result.events, (what) => violation(turnIndex, what));
        continue;
      }
      checkTurn(outcome.result, events, model.served(index, turnIndex), state.executions[turnIndex]!, resolvedAt, (what) =>
        violation(turnIndex, what),
      );
    }
  } finally {
    if (!closed) await session.close();
    else await session.close(); // idempotent: waits for the close that the burst began
    const unanswered = [...seen].filter((id) => !answered.has(id));
    if (unanswered.length > 0) counts.violations.push(`seed ${seed} (conversation ${index}): ${unanswered.length} requests never answered`);
  }
}

function checkTurn(
  result: TurnResult,
  iterated: TurnEvent[],
  served: readonly { at: number; text: string; calls: readonly unknown[] }[],
  executions: readonly Execution[],
  resolvedAt: number,
  violation: (what: string) => void,
): void {
  if (result.stopReason !== "end_turn") violation(`stop reason ${result.stopReason} (${result.error ?? "no error"})`);
  const last = served.at(-1);
  if (!last || last.calls.length > 0 || last.at > resolvedAt) violation("resolved before the model's final reply was served");
  const said = served.map((reply) => reply.text).join("");
  if (result.text !== said) violation(`text ${JSON.stringify(result.text)} is not what the model said ${JSON.stringify(said)}`);
  const calls = served.reduce((sum, reply) => sum + reply.calls.length, 0);
  if (executions.length !== calls) violation(`${executions.length} tool runs for ${calls} tool calls of the model`);
  const ran = executions.filter((execution) => execution.behavior === "ok").map((execution) => execution.text);
  const reported = result.events.flatMap((event) => (event.type === "tool-result" && event.text.startsWith("ran:") ? [event.text] : []));
  if (JSON.stringify(ran) !== JSON.stringify(reported))
    violation(`tool results ${JSON.stringify(reported)} are not this turn's runs ${JSON.stringify(ran)}`);
  if (iterated.length !== result.events.length) violation(`iterated ${iterated.length} events, the result has ${result.events.length}`);
  checkOrder(result.events, violation);
}

function checkOrder(events: readonly TurnEvent[], violation: (what: string) => void): void {
  const stops = events.filter((event) => event.type === "stop").length;
  if (stops !== 1 || events.at(-1)?.type !== "stop") violation(`${stops} stop events, last ${events.at(-1)?.type}`);
  const calls = new Map<string, number>();
  for (const event of events) {
    if (event.type === "tool-call") calls.set(event.toolCallId, (calls.get(event.toolCallId) ?? 0) + 1);
    if (event.type === "tool-result" && (calls.get(event.toolCallId) ?? 0) === 0)
      violation(`tool-result of ${event.toolCallId} before its tool-call`);
  }
}

type Settled = { kind: "resolved"; result: TurnResult } | { kind: "rejected"; error: unknown } | { kind: "timeout" };

async function settleWithin(promise: Promise<TurnResult>, ms: number): Promise<Settled> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Settled>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timeout" }), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        (result): Settled => ({ kind: "resolved", result }),
        (error: unknown): Settled => ({ kind: "rejected", error }),
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The soak's one tool: what it does is in its arguments (the plan's behaviour). */
export function soakTool(state: { turn: number; executions: Execution[][]; trigger: (() => void) | undefined }, onRun: () => void) {
  let runs = 0;
  return defineTool({
    name: SOAK_TOOL,
    description: "One step of a soak conversation",
    inputSchema: z.object({ label: z.string(), behavior: z.enum(["ok", "throw", "error-result", "timeout", "ignore-signal"]) }),
    timeoutMs: SOAK_TOOL_TIMEOUT_MS,
    execute: async ({ label, behavior }, { signal }) => {
      const text = `ran:${label}:${++runs}`;
      onRun();
      state.executions[state.turn]?.push({ label, behavior, text });
      state.trigger?.();
      if (behavior === "throw") throw new Error(`boom:${label}`);
      if (behavior === "error-result") return errorResult(`refused:${label}`);
      if (behavior === "timeout") {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return "late";
      }
      if (behavior === "ignore-signal") {
        await sleep(SOAK_TOOL_TIMEOUT_MS + 300);
        return "late";
      }
      await sleep(20);
      return text;
    },
  });
}

export type { ConversationPlan };
