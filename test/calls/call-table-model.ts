/**
 * Model-based schedules for the call table (fast-check `fc.commands`, fake
 * timers): random sequences of request, duplicate request, resolve, reject,
 * hang, cancel, caller abort, advance time, link down / up and close over
 * 4 scopes × 12 call ids. The unit suite runs {@link callTableModelProperty}
 * 1,000 times; the reliability suite can scale it up, and the planted-bug tests
 * prove it fails when a bug is switched on.
 *
 * Checked after every command: runs per CallKey ≤ 1; outcomes per execution ≤ 1;
 * frames per request id ≤ 1; no response crosses scopes; the disposition of a
 * new request matches what was observed so far; pending entries and live timers
 * match the calls still running (plus the grace timer). After close: zero
 * pending, zero timers, zero caller-signal listeners, every execution settled
 * exactly once, and — when the link never dropped — every request id answered
 * exactly once.
 */
import { getEventListeners } from "node:events";
import fc from "fast-check";
import { expect, vi } from "vitest";
import { CallTable, callKeyId, type CallKey, type CallOutcome, type RequestDisposition } from "../../src/calls/index.js";

const SCOPES: ReadonlyArray<Omit<CallKey, "toolCallId">> = [
  { connectionId: "c1", agentId: "a1", conversationId: "v1" },
  { connectionId: "c2", agentId: "a1", conversationId: "v1" },
  { connectionId: "c1", agentId: "a2", conversationId: "v1" },
  { connectionId: "c1", agentId: "a1", conversationId: "v2" },
];
const CALL_IDS = 12;
const GRACE_MS = 200;
const MAX_AGE_MS = 600_000;

type Behaviour = "async" | "sync-ok" | "throw";

interface Deferred {
  resolve(outcome: CallOutcome): void;
  reject(error: unknown): void;
  hung: boolean;
}

interface World {
  table: CallTable;
  linkUp: boolean;
  /** The table's own view: linkDown() called and not yet linkUp(). */
  tableLinkDown: boolean;
  graceDeadline: number | undefined;
  closed: boolean;
  everDown: boolean;
  nextRequest: number;
  callers: AbortController[];
  retiredCallers: AbortSignal[];
  runs: Map<string, number>;
  deferreds: Map<string, Deferred>;
  settles: Map<string, number>;
  settledAt: Map<string, number>;
  /** Keys answered "closed" (cached as cancelled, never run). */
  refused: Set<string>;
  lates: Map<string, number>;
  frames: Map<string, number>;
  requestKey: Map<string, string>;
  crossings: string[];
}

const keyOf = (scope: number, call: number): CallKey => ({ ...SCOPES[scope]!, toolCallId: `t${call}` });
const okText = (keyId: string): CallOutcome => ({ kind: "ok", content: [{ type: "text", text: keyId }] });

function createWorld(): World {
  const world = {} as World;
  Object.assign(world, {
    linkUp: true,
    tableLinkDown: false,
    graceDeadline: undefined,
    closed: false,
    everDown: false,
    nextRequest: 0,
    callers: SCOPES.map(() => new AbortController()),
    retiredCallers: [],
    runs: new Map(),
    deferreds: new Map(),
    settles: new Map(),
    settledAt: new Map(),
    refused: new Set(),
    lates: new Map(),
    frames: new Map(),
    requestKey: new Map(),
    crossings: [],
  });
  world.table = new CallTable({
    reconnectGraceMs: GRACE_MS,
    replay: { maxAgeMs: MAX_AGE_MS },
    deliver(requestId, response) {
      if (!world.linkUp) return false;
      world.frames.set(requestId, (world.frames.get(requestId) ?? 0) + 1);
      const owner = world.requestKey.get(requestId);
      if ("result" in response && response.result.is_error !== true) {
        const block = response.result.content[0];
        const text = block?.type === "text" ? block.text : undefined;
        if (text !== owner) world.crossings.push(`${requestId}: ${String(text)} for ${String(owner)}`);
      }
      return true;
    },
    onSettled(event) {
      const keyId = callKeyId(event.key);
      world.settles.set(keyId, (world.settles.get(keyId) ?? 0) + 1);
      world.settledAt.set(keyId, Date.now());
    },
    onLate(event) {
      const keyId = callKeyId(event.key);
      world.lates.set(keyId, (world.lates.get(keyId) ?? 0) + 1);
    },
  });
  return world;
}

function runningKeys(world: World): number {
  let running = 0;
  for (const [keyId, runs] of world.runs) if (runs > 0 && (world.settles.get(keyId) ?? 0) === 0) running++;
  return running;
}

function expectedDisposition(world: World, keyId: string): RequestDisposition {
  const settled = (world.settles.get(keyId) ?? 0) > 0 || world.refused.has(keyId);
  if (settled) return Date.now() - world.settledAt.get(keyId)! >= MAX_AGE_MS ? "expired" : "replayed";
  if ((world.runs.get(keyId) ?? 0) > 0) return "joined";
  return world.closed ? "closed" : "started";
}

function checkInvariants(world: World): void {
  for (const [keyId, runs] of world.runs) expect(runs, `runs of ${keyId}`).toBeLessThanOrEqual(1);
  for (const [keyId, settles] of world.settles) expect(settles, `outcomes of ${keyId}`).toBeLessThanOrEqual(1);
  for (const [keyId, lates] of world.lates) expect(lates, `late results of ${keyId}`).toBeLessThanOrEqual(1);
  for (const [requestId, frames] of world.frames) expect(frames, `frames for ${requestId}`).toBeLessThanOrEqual(1);
  expect(world.crossings).toEqual([]);
  const pending = runningKeys(world);
  expect(world.table.pendingCount).toBe(pending);
  const graceTimer = world.graceDeadline !== undefined ? 1 : 0;
  expect(vi.getTimerCount()).toBe(pending + graceTimer);
}

function checkQuiesced(world: World): void {
  world.table.close();
  world.closed = true;
  world.graceDeadline = undefined;
  checkInvariants(world);
  expect(world.table.pendingCount).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
  expect(world.table.heldCount).toBe(0);
  for (const signal of [...world.callers.map((caller) => caller.signal), ...world.retiredCallers]) {
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  }
  for (const [keyId, runs] of world.runs) if (runs > 0) expect(world.settles.get(keyId), `outcome of ${keyId}`).toBe(1);
  if (!world.everDown) for (const requestId of world.requestKey.keys()) expect(world.frames.get(requestId), requestId).toBe(1);
}

async function flush(): Promise<void> {
  for (let turn = 0; turn < 4; turn++) await Promise.resolve();
}

type Command = fc.AsyncCommand<World, World>;

abstract class Step implements Command {
  check(_world: Readonly<World>): boolean {
    return true;
  }
  async run(_model: World, world: World): Promise<void> {
    this.apply(world);
    await flush();
    checkInvariants(world);
  }
  abstract apply(world: World): void;
  abstract toString(): string;
}

class RequestStep extends Step {
  constructor(
    readonly scope: number,
    readonly call: number,
    readonly behaviour: Behaviour,
    readonly timeoutMs: number,
  ) {
    super();
  }
  apply(world: World): void {
    const key = keyOf(this.scope, this.call);
    const keyId = callKeyId(key);
    const requestId = `r${world.nextRequest++}`;
    world.requestKey.set(requestId, keyId);
    const expected = expectedDisposition(world, keyId);
    const disposition = world.table.request({
      requestId,
      key,
      toolName: "tool",
      timeoutMs: this.timeoutMs,
      signal: world.callers[this.scope]!.signal,
      run: (_signal) => {
        world.runs.set(keyId, (world.runs.get(keyId) ?? 0) + 1);
        if (this.behaviour === "sync-ok") return okText(keyId);
        if (this.behaviour === "throw") throw new Error("tool threw");
        return new Promise<CallOutcome>((resolve, reject) => world.deferreds.set(keyId, { resolve, reject, hung: false }));
      },
    });
    expect(disposition, `request ${requestId} for ${keyId}`).toBe(expected);
    if (disposition === "closed") {
      world.refused.add(keyId);
      world.settledAt.set(keyId, Date.now());
    }
  }
  toString(): string {
    return `request(${this.scope}, t${this.call}, ${this.behaviour}, ${this.timeoutMs})`;
  }
}

class RepeatRequestIdStep extends Step {
  constructor(readonly pick: number) {
    super();
  }
  override check(world: Readonly<World>): boolean {
    return world.nextRequest > 0;
  }
  apply(world: World): void {
    const requestId = `r${this.pick % world.nextRequest}`;
    const keyId = world.requestKey.get(requestId)!;
    const key = JSON.parse(keyId) as string[];
    const disposition = world.table.request({
      requestId,
      key: { connectionId: key[0]!, agentId: key[1]!, conversationId: key[2]!, toolCallId: key[3]! },
      toolName: "tool",
      timeoutMs: 1_000,
      run: () => {
        world.runs.set(keyId, (world.runs.get(keyId) ?? 0) + 1);
        return okText(keyId);
      },
    });
    expect(["duplicate", "replayed", "joined", "expired", "closed"]).toContain(disposition);
  }
  toString(): string {
    return `repeatRequestId(${this.pick})`;
  }
}

class SettleStep extends Step {
  constructor(
    readonly scope: number,
    readonly call: number,
    readonly how: "resolve" | "reject" | "hang",
  ) {
    super();
  }
  apply(world: World): void {
    const keyId = callKeyId(keyOf(this.scope, this.call));
    const deferred = world.deferreds.get(keyId);
    if (deferred === undefined || deferred.hung) return;
    if (this.how === "hang") deferred.hung = true;
    else if (this.how === "resolve") deferred.resolve(okText(keyId));
    else deferred.reject(new Error("rejected"));
    if (this.how !== "hang") deferred.hung = true; // settled once; later steps do nothing
  }
  toString(): string {
    return `${this.how}(${this.scope}, t${this.call})`;
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
    world.everDown = true;
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

const commandArbitraries: Array<fc.Arbitrary<Command>> = [
    fc
      .tuple(scope, call, fc.constantFrom<Behaviour>("async", "async", "async", "sync-ok", "throw"), fc.constantFrom(0, 1, 10, 100, 1_000, 60_000))
      .map(([s, c, behaviour, timeoutMs]) => new RequestStep(s, c, behaviour, timeoutMs)),
    fc.nat().map((pick) => new RepeatRequestIdStep(pick)),
    fc.tuple(scope, call, fc.constantFrom("resolve" as const, "reject" as const, "hang" as const)).map(([s, c, how]) => new SettleStep(s, c, how)),
    scope.map((s) => new CancelStep(s)),
    scope.map((s) => new CallerAbortStep(s)),
    fc.constantFrom(0, 1, 9, 10, 99, 100, 199, 200, 1_000, 60_000, 600_000).map((ms) => new AdvanceStep(ms)),
    fc.constant(new LinkDownStep()),
    fc.boolean().map((redeliver) => new LinkUpStep(redeliver)),
  fc.constant(new CloseStep()),
];

export const callTableCommands = fc.commands(commandArbitraries, { maxCommands: 64 });

/** The property: any schedule keeps every invariant and quiesces cleanly. Needs `vi.useFakeTimers()`. */
export const callTableModelProperty = fc.asyncProperty(callTableCommands, async (commands) => {
  vi.clearAllTimers();
  vi.setSystemTime(0);
  let world: World | undefined;
  await fc.asyncModelRun(() => {
    world = createWorld();
    return { model: world, real: world };
  }, commands);
  checkQuiesced(world!);
});
