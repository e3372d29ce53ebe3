/**
 * Model-based schedules of the call table (fast-check `fc.commands`, fake
 * timers): random sequences (≤ 64 steps) of request (new call, the same key under a
 * new request id, the same request id again, the same tool call id with another
 * input, a request id reused for another call), resolve, reject, advance time,
 * link down, link up (a new epoch; the runtime keeps its calls in "cloud" runs
 * and forgets them in "local" runs), a new turn, turn cancel and close, over 2
 * scopes × 6 call ids × 2 inputs, with at most 4 calls running and a cache of 4.
 *
 * A key (scope, tool call id, input) can stand for several calls in a row: a new request id with
 * the key of an answered call is a new model request (providers reuse `call_0`), unless it comes
 * in the same turn after a reconnect (the runtime asking again for an answer it lost). The model
 * numbers those calls (`key#n`) and predicts which one each request id belongs to.
 *
 * After every step: runs per call ≤ 1 (a forgotten call is never run again); a new call of a key
 * starts only when no request id of its previous call is still owed an answer; frames per request
 * id per epoch ≤ 1; a tool's result only ever answers a request id of its own call; one settlement
 * per call; every disposition matches the model's; no timer armed while nothing runs. At the end:
 * every request id still owed an answer got one, then close leaves no call running and no timer.
 */
import fc from "fast-check";
import { vi } from "vitest";
import { z } from "zod";
import { canonicalJson } from "../../packages/toolrelay/src/internal/canonical-json.js";
import { CallTable, inputDigest, type CallRecord, type RequestDisposition } from "../../packages/toolrelay/src/calls/index.js";
import { defineTool } from "../../packages/toolrelay/src/tools/index.js";
import type { ToolCallResponseBody } from "../../packages/toolrelay/src/wire/index.js";

const SCOPES = ["conversation-a", "conversation-b"] as const;
const CALL_IDS = 6;
const INPUTS = [{ row: 1 }, { row: 2 }] as const;
export const LIMITS = { maxConcurrentCalls: 4, maxCachedCalls: 4, reconnectGraceMs: 200, toolTimeoutMs: 1_000, resendWindowMs: 300 };

/** What the schedules reached, summed over the runs of one property. */
export interface Coverage {
  runs: number;
  steps: number;
  executions: number;
  dispositions: Record<RequestDisposition, number>;
}

export const emptyCoverage = (): Coverage => ({
  runs: 0,
  steps: 0,
  executions: 0,
  dispositions: { started: 0, reused: 0, joined: 0, replayed: 0, resent: 0, expired: 0, duplicate: 0, conflict: 0, busy: 0, closed: 0 },
});

interface RequestModel {
  /** The model key (scope|call|input) it was first issued with. */
  key: string;
  /** The call (`key#n`) it belongs to; undefined when it was answered `closed` (no call). */
  call: string | undefined;
  /** Epochs it was asked on, and epochs an answer for it was written on. */
  epochs: Set<number>;
  written: Set<number>;
}

interface World {
  table: CallTable;
  keeps: boolean;
  link: { up: boolean; epoch: number };
  closed: boolean;
  /** The session's turn the requests arrive in. */
  turn: number;
  /** model key → its calls in order (`key#0`, `key#1`, …) and the turn each began in */
  calls: Map<string, Array<{ id: string; turn: number }>>;
  /** The call a report belongs to, while `request` may start one. */
  starting: string | undefined;
  /** model key → calls started and not run yet (the tool runs once its input is validated). */
  awaitingRun: Map<string, string[]>;
  /** call id (`key#n`) → runs of the tool */
  runs: Map<string, number>;
  settles: Map<string, number>;
  /** call ids whose call settled */
  settled: Set<string>;
  pending: Array<{ key: string; resolve(value: string): void; reject(error: Error): void }>;
  /** request id → what the model knows of it */
  requests: Map<string, RequestModel>;
  /** `${requestId}@${epoch}` → frames */
  frames: Map<string, number>;
  answered: Set<string>;
  failures: string[];
  nextRequest: number;
  coverage: Coverage;
}

const modelKey = (scope: number, call: number, input: number) => `${SCOPES[scope]}|c${call}|${input}`;

function createWorld(keeps: boolean, coverage: Coverage): World {
  const world = {
    keeps,
    link: { up: true, epoch: 1 },
    closed: false,
    turn: 0,
    calls: new Map(),
    starting: undefined,
    awaitingRun: new Map(),
    runs: new Map(),
    settles: new Map(),
    settled: new Set(),
    pending: [],
    requests: new Map(),
    frames: new Map(),
    answered: new Set(),
    failures: [],
    nextRequest: 0,
    coverage,
  } as unknown as World;
  world.table = new CallTable({
    limits: LIMITS,
    output: {
      end(record) {
        const call = world.requests.get(record.deliveries[0]!.requestId)?.call ?? world.starting ?? keyOfRecord(record);
        world.settles.set(call, (world.settles.get(call) ?? 0) + 1);
        world.settled.add(call);
      },
      response(_record, requestId, body) {
        if (!world.link.up) return undefined;
        const slot = `${requestId}@${world.link.epoch}`;
        world.frames.set(slot, (world.frames.get(slot) ?? 0) + 1);
        world.answered.add(requestId);
        world.requests.get(requestId)?.written.add(world.link.epoch);
        const owner = world.requests.get(requestId)?.call ?? world.starting;
        const text = textOf(body);
        if (text.startsWith("ran ") && text !== `ran ${owner}`) world.failures.push(`crossing: ${requestId} (of ${owner}) got "${text}"`);
        return world.link.epoch;
      },
      start() {},
      late() {},
      progress() {},
    },
  });
  return world;
}

function keyOfRecord(record: CallRecord): string {
  const scope = SCOPES.indexOf(record.conversationId as (typeof SCOPES)[number]);
  const input = INPUTS.findIndex((candidate) => inputDigest(canonicalJson(candidate)) === record.inputDigest);
  return modelKey(scope, Number(record.toolCallId.slice(1)), input);
}

function textOf(body: ToolCallResponseBody): string {
  if ("error" in body) return body.error;
  const block = body.result.content[0];
  return block?.type === "text" ? block.text : "";
}

function toolFor(world: World) {
  return defineTool({
    name: "append_row",
    description: "appends a row",
    inputSchema: z.looseObject({}),
    execute: (input, context) => {
      const runKey = modelKey(
        SCOPES.indexOf(context.conversationId as (typeof SCOPES)[number]),
        Number(context.toolCallId.slice(1)),
        (input as { row: number }).row - 1,
      );
      const key = world.awaitingRun.get(runKey)?.shift();
      if (key === undefined) world.failures.push(`a run outside a new call: ${runKey}`);
      world.runs.set(key ?? "?", (world.runs.get(key ?? "?") ?? 0) + 1);
      world.coverage.executions++;
      return new Promise<string>((resolve, reject) => world.pending.push({ key: key ?? "?", resolve, reject }));
    },
  });
}

type Kind = "new" | "same-call" | "same-request" | "other-input" | "conflict";

/** Send one request as the schedule says; check the dispositions the model can predict. */
function request(
  world: World,
  tool: ReturnType<typeof toolFor>,
  kind: Kind,
  scope: number,
  call: number,
  input: number,
  pick: number,
): void {
  if (!world.link.up) return;
  const known = [...world.requests.entries()];
  let requestId = `r${world.nextRequest++}`;
  if (kind === "same-request" || kind === "conflict") {
    if (known.length === 0) return;
    const [id, seen] = known[pick % known.length]!;
    requestId = id;
    if (kind === "same-request") [scope, call, input] = parse(seen.key);
    else if (parse(seen.key).join() === [scope, call, input].join()) return;
  } else if (kind === "same-call" || kind === "other-input") {
    if (known.length === 0) return;
    [scope, call, input] = parse(known[pick % known.length]![1].key);
    if (kind === "other-input") input = 1 - input;
  }
  const key = modelKey(scope, call, input);
  const seen = world.requests.get(requestId);
  const firstIssue = seen === undefined;
  const epoch = world.link.epoch;
  const calls = world.calls.get(key) ?? [];
  const latest = calls.at(-1);
  const isRunning = (id: string) => world.runs.has(id) && !world.settled.has(id);
  const runningCount = [...world.runs.keys()].filter(isRunning).length;
  const slotSeen = [...world.calls.keys()].some((candidate) => candidate !== key && candidate.startsWith(`${SCOPES[scope]}|c${call}|`));
  const requestsOf = (id: string) => [...world.requests.values()].filter((candidate) => candidate.call === id);
  /** The runtime still waits for this request's answer: asked and not answered since, and not forgotten by a local reconnect or close. */
  const owed = (candidate: RequestModel) => {
    const lastAsked = Math.max(...candidate.epochs);
    const answered = [...candidate.written].some((written) => written >= lastAsked);
    return !answered && !world.closed && (world.keeps || lastAsked === epoch);
  };
  const lastEpochOf = (candidate: RequestModel) => Math.max(...candidate.epochs, ...candidate.written);
  let expected: RequestDisposition[];
  let startsCall = false;
  if (!firstIssue && seen.key !== key) expected = ["conflict"];
  else if (!firstIssue)
    expected = seen.call !== undefined && isRunning(seen.call) ? ["duplicate", "joined"] : ["duplicate", "resent", "expired"];
  // A running call whose every request id was answered already (a conflict error is an answer too) is no longer asked for.
  else if (latest !== undefined && isRunning(latest.id) && requestsOf(latest.id).some(owed)) expected = ["joined"];
  else if (latest !== undefined && world.settled.has(latest.id) && requestsOf(latest.id).some(owed)) expected = ["replayed"];
  else if (
    latest !== undefined &&
    world.settled.has(latest.id) &&
    latest.turn === world.turn &&
    requestsOf(latest.id).some((candidate) => lastEpochOf(candidate) < epoch)
  )
    expected = ["replayed", "expired"];
  else {
    startsCall = true;
    if (world.closed) expected = ["closed"];
    else if (runningCount >= LIMITS.maxConcurrentCalls) expected = ["busy"];
    else expected = slotSeen || latest !== undefined ? ["reused"] : ["started"];
  }
  const callId = startsCall ? `${key}#${calls.length}` : (seen?.call ?? latest?.id);
  if (firstIssue) world.requests.set(requestId, { key, call: callId, epochs: new Set(), written: new Set() });
  world.starting = startsCall ? callId : undefined;
  const awaiting = world.awaitingRun.get(key) ?? [];
  if (startsCall) world.awaitingRun.set(key, [...awaiting, callId!]);
  const disposition = world.table.request({
    requestId,
    epoch,
    turn: `turn-${world.turn}`,
    connectionId: "c",
    agentId: "a",
    conversationId: SCOPES[scope]!,
    toolCallId: `t${call}`,
    inputDigest: inputDigest(canonicalJson(INPUTS[input])),
    toolName: "append_row",
    tool,
    tools: { names: () => ["append_row"] },
    input: INPUTS[input],
    inputBytes: 7,
  });
  world.starting = undefined;
  world.coverage.dispositions[disposition]++;
  if (firstIssue && disposition === "closed") world.requests.delete(requestId);
  else world.requests.get(requestId)?.epochs.add(epoch);
  if (startsCall && disposition !== "closed") world.calls.set(key, [...calls, { id: callId!, turn: world.turn }]);
  // A call that did not start as the model said must not be taken for the next run.
  if (startsCall && disposition !== "started" && disposition !== "reused")
    world.awaitingRun.set(
      key,
      (world.awaitingRun.get(key) ?? []).filter((id) => id !== callId),
    );
  if (!expected.includes(disposition))
    world.failures.push(`${kind} ${requestId} for ${key}: got ${disposition}, expected ${expected.join("|")}`);
  if (disposition === "busy") world.settled.add(callId!);
}

const parse = (key: string): [number, number, number] => {
  const [scope, call, input] = key.split("|");
  return [SCOPES.indexOf(scope as (typeof SCOPES)[number]), Number(call!.slice(1)), Number(input)];
};

async function flush(): Promise<void> {
  for (let turn = 0; turn < 4; turn++) await Promise.resolve();
}

function checkInvariants(world: World): void {
  for (const [key, runs] of world.runs) if (runs > 1) world.failures.push(`${key} ran ${runs} times`);
  for (const [key, settles] of world.settles) if (settles > 1) world.failures.push(`${key} settled ${settles} times`);
  for (const [slot, frames] of world.frames) if (frames > 1) world.failures.push(`${frames} frames for ${slot}`);
  const running = [...world.runs.keys()].filter((key) => !world.settled.has(key)).length;
  if (world.table.runningCount !== running) world.failures.push(`table runs ${world.table.runningCount} calls, the model ${running}`);
  if (running === 0 && world.table.counts().timers !== 0)
    world.failures.push(`${world.table.counts().timers} timers armed while nothing runs`);
  if (world.failures.length > 0) throw new Error(world.failures.join("\n"));
}

const step = fc.oneof(
  {
    weight: 24,
    arbitrary: fc.record({
      type: fc.constant("request" as const),
      kind: fc.constantFrom<Kind>("new", "new", "same-call", "same-request", "other-input", "conflict"),
      scope: fc.nat(SCOPES.length - 1),
      call: fc.nat(CALL_IDS - 1),
      input: fc.nat(1),
      pick: fc.nat(50),
    }),
  },
  { weight: 14, arbitrary: fc.record({ type: fc.constantFrom("resolve" as const, "reject" as const), pick: fc.nat(50) }) },
  { weight: 6, arbitrary: fc.record({ type: fc.constant("advance" as const), ms: fc.constantFrom(50, 150, 250, 1_000) }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constantFrom("down" as const, "up" as const, "cancel" as const) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("turn" as const) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("close" as const) }) },
);

/** One schedule: `keeps` picks cloud (the runtime keeps its calls across epochs) or local. */
export function scheduleProperty(coverage: Coverage = emptyCoverage()) {
  return fc.asyncProperty(fc.boolean(), fc.array(step, { minLength: 8, maxLength: 64, size: "max" }), async (keeps, steps) => {
    vi.clearAllTimers();
    const world = createWorld(keeps, coverage);
    const tool = toolFor(world);
    coverage.runs++;
    for (const action of steps) {
      coverage.steps++;
      if (action.type === "request") request(world, tool, action.kind, action.scope, action.call, action.input, action.pick);
      else if (action.type === "resolve" || action.type === "reject") {
        const run = world.pending.splice(action.pick % Math.max(1, world.pending.length), 1)[0];
        if (action.type === "resolve") run?.resolve(`ran ${run.key}`);
        else run?.reject(new Error(`failed ${run.key}`));
      } else if (action.type === "advance") vi.advanceTimersByTime(action.ms);
      else if (action.type === "down" && world.link.up) {
        world.link.up = false;
        world.table.epochEnded();
      } else if (action.type === "up" && !world.link.up) {
        world.link = { up: true, epoch: world.link.epoch + 1 };
        world.table.epochStarted(world.link.epoch, keeps);
      } else if (action.type === "cancel") world.table.cancel("the turn was aborted");
      else if (action.type === "turn") world.turn++;
      else if (action.type === "close") {
        world.table.close();
        world.closed = true;
      }
      await flush();
      checkInvariants(world);
    }
    // Quiesce: the link back, every tool done, every deadline past; every request id still owed an answer has one.
    if (!world.link.up) {
      world.link = { up: true, epoch: world.link.epoch + 1 };
      world.table.epochStarted(world.link.epoch, keeps);
    }
    for (const run of world.pending.splice(0)) run.resolve(`ran ${run.key}`);
    await flush();
    vi.advanceTimersByTime(LIMITS.toolTimeoutMs);
    checkInvariants(world);
    for (const [requestId, { epochs }] of world.requests) {
      const owed = !world.closed && (keeps || epochs.has(world.link.epoch));
      if (owed && !world.answered.has(requestId))
        world.failures.push(`${requestId} (asked on epochs ${[...epochs].join(",")}) never answered`);
    }
    world.table.close();
    if (world.table.runningCount !== 0 || vi.getTimerCount() !== 0)
      world.failures.push(`after close: ${world.table.runningCount} running, ${vi.getTimerCount()} timers`);
    checkInvariants(world);
  });
}
