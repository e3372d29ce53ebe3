/**
 * The commands of the model-based schedules (fast-check `fc.commands`) and the
 * property that runs them: random sequences (≤ 64 steps) of request, duplicate
 * request (same key, new request id), repeated request id, a burst of 2–8 new calls, resolve, reject,
 * hang, cancel (turn abort for a scope), caller abort, advance time, link down,
 * link up (redeliver true | false) and close over 4 scopes × 12 call ids with at
 * most 16 calls running at once. Every step is followed by `checkInvariants`,
 * every schedule by `checkQuiesced` (model-schedules-world.ts). Needs
 * `vi.useFakeTimers()`.
 */
import fc from "fast-check";
import { vi } from "vitest";
import type { CallKey, CallOutcome, RequestDisposition } from "../../src/calls/index.js";
import {
  CALL_IDS,
  GRACE_MS,
  MAX_CONCURRENT,
  SCOPES,
  bump,
  checkInvariants,
  checkQuiesced,
  createWorld,
  ensureEqual,
  expectedDisposition,
  isRunning,
  keyOf,
  markUnansweredMayBeDropped,
  modelKeyId,
  okText,
  recordCached,
  releaseHungTools,
  runningCount,
  type World,
} from "./model-schedules-world.js";
import { heldResponsesSurviveEviction } from "./model-held-eviction.js";

type Behaviour = "async" | "sync-ok" | "throw" | "reject-soon";

/** What the schedules exercised, summed over every run of a property (for the docs' figures). */
export interface ScheduleCoverage {
  runs: number;
  steps: number;
  dispositions: Record<RequestDisposition, number>;
  executions: number;
  lateResults: number;
  linkDrops: number;
  maxConcurrent: number;
  /** Schedules in which 16 calls ran at once (the cap). */
  runsAtCap: number;
}

export function emptyCoverage(): ScheduleCoverage {
  const dispositions = { started: 0, joined: 0, replayed: 0, expired: 0, duplicate: 0, closed: 0 };
  return { runs: 0, steps: 0, dispositions, executions: 0, lateResults: 0, linkDrops: 0, maxConcurrent: 0, runsAtCap: 0 };
}

async function flushMicrotasks(): Promise<void> {
  for (let turn = 0; turn < 4; turn++) await Promise.resolve();
}

type Command = fc.AsyncCommand<World, World>;

abstract class Step implements Command {
  check(_world: Readonly<World>): boolean {
    return true;
  }
  async run(_model: World, world: World): Promise<void> {
    this.apply(world);
    await flushMicrotasks();
    checkInvariants(world);
  }
  abstract apply(world: World): void;
  abstract toString(): string;
}

/** One `external_tool_call_request` for `key` with `requestId`, checked against the model's disposition. */
function request(world: World, key: CallKey, requestId: string, behaviour: Behaviour, timeoutMs: number): void {
  const keyId = modelKeyId(key);
  const expected = expectedDisposition(world, keyId, requestId);
  const record = world.requests.get(requestId) ?? { keyId, dispositions: [], live: false, mayBeUnanswered: false };
  // A request that arrives while the link is down can never be answered on it (reset when asked again while up).
  // After a close while the link was down the table keeps that view (linkUp is ignored once closed; the
  // session closes its link with the table, so nothing can ask again there).
  record.mayBeUnanswered = !world.linkUp || world.tableLinkDown;
  world.requests.set(requestId, record);
  world.keyOfId.set(keyId, key);
  const disposition = world.table.request({
    requestId,
    key,
    toolName: "tool",
    timeoutMs,
    signal: world.callers[scopeIndexOf(key)]!.signal,
    run: (_signal) => {
      bump(world.runs, keyId);
      if (behaviour === "sync-ok") return okText(keyId);
      if (behaviour === "throw") throw new Error(keyId);
      if (behaviour === "reject-soon") return Promise.reject(new Error(keyId));
      return new Promise<CallOutcome>((resolve, reject) => world.deferreds.push({ keyId, resolve, reject, settled: false, hung: false }));
    },
  });
  ensureEqual(disposition, expected, `disposition of request ${requestId} for ${keyId}`);
  record.dispositions.push(disposition);
  if (disposition === "started" || disposition === "joined") record.live = true;
  // The table caches a refusal after close (cancelled, never run); mirror it in the model.
  if (disposition === "closed") recordCached(world, keyId);
}

function scopeIndexOf(key: CallKey): number {
  return SCOPES.findIndex(
    (scope) => scope.connectionId === key.connectionId && scope.agentId === key.agentId && scope.conversationId === key.conversationId,
  );
}

/** Would this request start a new execution past the concurrency cap? (then the step is skipped) */
function overCap(world: World, keyId: string, requestId: string): boolean {
  return expectedDisposition(world, keyId, requestId) === "started" && runningCount(world) >= MAX_CONCURRENT;
}

class RequestStep extends Step {
  constructor(readonly scope: number, readonly call: number, readonly behaviour: Behaviour, readonly timeoutMs: number) {
    super();
  }
  override check(world: Readonly<World>): boolean {
    return !overCap(world as World, modelKeyId(keyOf(this.scope, this.call)), `r${world.nextRequest}`);
  }
  apply(world: World): void {
    request(world, keyOf(this.scope, this.call), `r${world.nextRequest++}`, this.behaviour, this.timeoutMs);
  }
  toString(): string {
    return `request(${this.scope}, t${this.call}, ${this.behaviour}, ${this.timeoutMs})`;
  }
}

/** Several new calls at once (a model emitting parallel tool calls): drives schedules up to the cap. */
class BurstStep extends Step {
  constructor(readonly scope: number, readonly firstCall: number, readonly count: number) {
    super();
  }
  apply(world: World): void {
    for (let index = 0; index < this.count; index++) {
      const key = keyOf(this.scope, (this.firstCall + index) % CALL_IDS);
      const requestId = `r${world.nextRequest}`;
      if (overCap(world, modelKeyId(key), requestId)) return;
      world.nextRequest++;
      request(world, key, requestId, "async", 60_000);
    }
  }
  toString(): string {
    return `burst(${this.scope}, t${this.firstCall}, ${this.count})`;
  }
}

/** The runtime asks again for a key it asked before, with a new request id (its retry). */
class DuplicateRequestStep extends Step {
  constructor(readonly pick: number, readonly behaviour: Behaviour) {
    super();
  }
  override check(world: Readonly<World>): boolean {
    return world.keyOfId.size > 0;
  }
  apply(world: World): void {
    const keys = [...world.keyOfId.values()];
    request(world, keys[this.pick % keys.length]!, `r${world.nextRequest++}`, this.behaviour, 1_000);
  }
  toString(): string {
    return `duplicateRequest(${this.pick}, ${this.behaviour})`;
  }
}

/** The very same request id again (a redelivered frame). */
class RepeatRequestIdStep extends Step {
  constructor(readonly pick: number) {
    super();
  }
  override check(world: Readonly<World>): boolean {
    return world.nextRequest > 0;
  }
  apply(world: World): void {
    const requestId = `r${this.pick % world.nextRequest}`;
    const key = world.keyOfId.get(world.requests.get(requestId)!.keyId)!;
    request(world, key, requestId, "sync-ok", 1_000);
  }
  toString(): string {
    return `repeatRequestId(${this.pick})`;
  }
}

class SettleStep extends Step {
  constructor(readonly pick: number, readonly how: "resolve" | "reject" | "hang") {
    super();
  }
  apply(world: World): void {
    const open = world.deferreds.filter((deferred) => !deferred.settled && !deferred.hung);
    if (open.length === 0) return;
    const deferred = open[this.pick % open.length]!;
    if (this.how === "hang") {
      deferred.hung = true;
      return;
    }
    deferred.settled = true;
    if (this.how === "resolve") deferred.resolve(okText(deferred.keyId));
    else deferred.reject(new Error(deferred.keyId));
  }
  toString(): string {
    return `${this.how}(${this.pick})`;
  }
}

class CancelStep extends Step {
  constructor(readonly scope: number) {
    super();
  }
  apply(world: World): void {
    const scope = SCOPES[this.scope]!;
    world.table.cancel(
      (key) => key.connectionId === scope.connectionId && key.agentId === scope.agentId && key.conversationId === scope.conversationId,
      "the turn was aborted",
    );
  }
  toString(): string {
    return `cancel(${this.scope})`;
  }
}

class CallerAbortStep extends Step {
  constructor(readonly scope: number) {
    super();
  }
  apply(world: World): void {
    const caller = world.callers[this.scope]!;
    world.retiredCallers.push(caller.signal);
    world.callers[this.scope] = new AbortController();
    caller.abort(new Error("caller stopped"));
  }
  toString(): string {
    return `callerAbort(${this.scope})`;
  }
}

class AdvanceStep extends Step {
  constructor(readonly ms: number) {
    super();
  }
  apply(world: World): void {
    vi.advanceTimersByTime(this.ms);
    if (world.graceDeadline !== undefined && Date.now() >= world.graceDeadline) world.graceDeadline = undefined;
  }
  toString(): string {
    return `advance(${this.ms})`;
  }
}

class LinkDownStep extends Step {
  apply(world: World): void {
    world.linkUp = false;
    world.table.linkDown();
    if (world.closed || world.tableLinkDown) return;
    world.tableLinkDown = true;
    world.graceDeadline = Date.now() + GRACE_MS;
  }
  toString(): string {
    return "linkDown";
  }
}

class LinkUpStep extends Step {
  constructor(readonly redeliver: boolean) {
    super();
  }
  apply(world: World): void {
    if (!world.closed && world.tableLinkDown && !this.redeliver) {
      // The runtime forgot its pending calls: their request ids are given up (held responses dropped).
      markUnansweredMayBeDropped(world);
      for (const record of world.requests.values()) if (isRunning(world, record.keyId)) record.live = false;
    }
    world.linkUp = true;
    world.table.linkUp({ redeliver: this.redeliver });
    if (world.closed) return;
    world.tableLinkDown = false;
    world.graceDeadline = undefined;
  }
  toString(): string {
    return `linkUp(${this.redeliver})`;
  }
}

class CloseStep extends Step {
  apply(world: World): void {
    if (!world.linkUp && !world.closed) markUnansweredMayBeDropped(world);
    world.table.close("closed by the schedule");
    world.closed = true;
    world.graceDeadline = undefined;
  }
  toString(): string {
    return "close";
  }
}

const scope = fc.nat(SCOPES.length - 1);
const call = fc.nat(CALL_IDS - 1);
const behaviour = fc.constantFrom<Behaviour>("async", "async", "async", "async", "sync-ok", "throw", "reject-soon");

const requestStep = fc
  .tuple(scope, call, behaviour, fc.constantFrom(0, 10, 100, 1_000, 60_000, 60_000))
  .map(([s, c, b, timeoutMs]) => new RequestStep(s, c, b, timeoutMs));
const settleStep = fc
  .tuple(fc.nat(), fc.constantFrom("resolve" as const, "reject" as const, "hang" as const))
  .map(([pick, how]) => new SettleStep(pick, how));

/**
 * Weighted by repetition (fc.commands picks uniformly among its arbitraries): requests dominate so that
 * schedules reach the 16-call cap; close is rare (every schedule is closed at its end anyway).
 */
const commandArbitraries: Array<fc.Arbitrary<Command>> = [
  ...Array.from({ length: 10 }, () => requestStep),
  ...Array.from({ length: 2 }, () =>
    fc.tuple(scope, call, fc.integer({ min: 2, max: 8 })).map(([s, c, count]) => new BurstStep(s, c, count)),
  ),
  ...Array.from({ length: 3 }, () => fc.tuple(fc.nat(), behaviour).map(([pick, b]) => new DuplicateRequestStep(pick, b))),
  ...Array.from({ length: 2 }, () => fc.nat().map((pick) => new RepeatRequestIdStep(pick))),
  ...Array.from({ length: 5 }, () => settleStep),
  scope.map((s) => new CancelStep(s)),
  scope.map((s) => new CallerAbortStep(s)),
  ...Array.from({ length: 2 }, () =>
    fc.constantFrom(0, 1, 9, 10, 99, 100, 199, 200, 1_000, 60_000, 600_000).map((ms) => new AdvanceStep(ms)),
  ),
  ...Array.from({ length: 2 }, () => fc.constant(new LinkDownStep())),
  ...Array.from({ length: 2 }, () => fc.boolean().map((redeliver) => new LinkUpStep(redeliver))),
  fc.constant(new CloseStep()),
];

/** Up to 64 steps per schedule. */
export const scheduleCommands = fc.commands(commandArbitraries, { maxCommands: 64, size: "max" });

/** The property: every schedule keeps every invariant after every step and quiesces cleanly. */
export function modelSchedulesProperty(coverage: ScheduleCoverage = emptyCoverage()) {
  const tolerateEvictedHeldResponses = !heldResponsesSurviveEviction();
  return fc.asyncProperty(scheduleCommands, async (commands) => {
    vi.clearAllTimers();
    vi.setSystemTime(0);
    let world: World | undefined;
    let peak = 0;
    const steps = [...commands].map((command) => {
      const wrapped: Command = {
        check: (model) => command.check(model),
        run: async (model, real) => {
          await command.run(model, real);
          coverage.steps++;
          peak = Math.max(peak, runningCount(real));
          if (command.toString() === "linkDown") coverage.linkDrops++;
        },
        toString: () => command.toString(),
      };
      return wrapped;
    });
    try {
      await fc.asyncModelRun(() => {
        world = createWorld({ tolerateEvictedHeldResponses });
        return { model: world, real: world };
      }, steps);
      await checkQuiesced(world!);
    } finally {
      // A failed schedule must not leave hanging tools (pending promises) behind either.
      if (world !== undefined) releaseHungTools(world);
    }
    coverage.runs++;
    coverage.maxConcurrent = Math.max(coverage.maxConcurrent, peak);
    if (peak >= MAX_CONCURRENT) coverage.runsAtCap++;
    for (const record of world!.requests.values()) for (const disposition of record.dispositions) coverage.dispositions[disposition]++;
    for (const runs of world!.runs.values()) coverage.executions += runs;
    for (const lates of world!.lates.values()) coverage.lateResults += lates;
  });
}
