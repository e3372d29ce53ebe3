/**
 * What happens in a thread's turn, in order, for whichever HTTP request is attached to it: the
 * turn's events (pumped from its iterator as they arrive), a `calls` wake-up when the runtime
 * starts waiting for a client tool, and the turn's end. Items stay queued while no request is
 * attached (between the response that returned `tool_calls` and the request that brings their
 * results), and are read by one consumer at a time. A consumer whose client went away stops
 * reading at once (its `signal`): what it leaves stays queued.
 *
 * What the thread's calls must know is told to them as the turn reports it, not when a request
 * reads it: the model's calls to the client's tools (announced), and the runtime's results (a
 * call it answered itself is over before the model's next call, which may reuse its id).
 */
import type { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import type { ClientCalls, ReturnedToolCall } from "./client-calls.js";
import type { ClientToolSet } from "./client-tool-set.js";
import type { CompletionSink } from "./completion-writer.js";
import type { Turn, TurnResult } from "../session/turn.js";
import type { TurnEvent } from "../session/turn-events.js";

export type InboxItem =
  | { kind: "event"; event: TurnEvent }
  | { kind: "calls" }
  | { kind: "end"; result: TurnResult }
  | { kind: "failed"; error: ToolrelayError };

/** How reading a turn for one response ended. */
export type TurnReadOutcome =
  | { kind: "tool_calls"; calls: ReturnedToolCall[] }
  /** The client went away (its request's signal): nothing more was read for it. */
  | { kind: "left" }
  | { kind: "end"; result: TurnResult }
  | { kind: "failed"; error: ToolrelayError };

export class ThreadInbox {
  readonly #calls: ClientCalls;
  readonly #tools: ClientToolSet;
  #items: InboxItem[] = [];
  #waiter: ((item: InboxItem) => void) | undefined;
  #callsQueued = false;
  /** The runtime tool_call_ids whose result the turn reported since the model last called them (the turn's own calls, not a subagent's). */
  #results = new Set<string>();
  #resultWaiters = new Map<string, () => void>();

  // biome-ignore lint/style/useConsistentMemberAccessibility: a constructor cannot be #private; of() is the way in
  private constructor(calls: ClientCalls, tools: ClientToolSet) {
    this.#calls = calls;
    this.#tools = tools;
  }

  /** Pump `turn` into this inbox until it ends, telling `calls` about the calls to `tools` as they come. Never rejects. */
  static of(turn: Turn, calls: ClientCalls, tools: ClientToolSet): ThreadInbox {
    const inbox = new ThreadInbox(calls, tools);
    void (async () => {
      try {
        for await (const event of turn) inbox.#push({ kind: "event", event });
        inbox.#push({ kind: "end", result: await turn.result });
      } catch (error) {
        inbox.#push({ kind: "failed", error: error as ToolrelayError });
      }
    })();
    return inbox;
  }

  /**
   * The runtime waits for a client tool. Queued after one macrotask, so that every turn event
   * the session received before the call (the model's announcement of all the calls of its
   * response) is in the inbox ahead of it. At most one is queued at a time.
   */
  wakeForCalls(): void {
    if (this.#callsQueued) return;
    this.#callsQueued = true;
    // biome-ignore lint/style/noRestrictedGlobals: one macrotask (the session's pending I/O first), not a delay
    setImmediate(() => this.#push({ kind: "calls" }));
  }

  /**
   * Read the turn for one response until it ends or the runtime waits for client tools that were
   * not returned yet: assistant text goes to `sink`; the calls returned are those the runtime
   * waits for and the others of the same model response. Returns `left` as soon as `signal`
   * aborts (the client went away), without waiting for the turn.
   */
  async readTurn(sink: CompletionSink, signal: AbortSignal): Promise<TurnReadOutcome> {
    const calls = this.#calls;
    for (;;) {
      const item = await this.next(signal);
      if (item === undefined) return { kind: "left" };
      if (item.kind === "event") {
        if (item.event.type === "assistant") sink.text(item.event.text);
      } else if (item.kind === "calls") {
        if (calls.waitingUnreturned > 0) return { kind: "tool_calls", calls: calls.takeUnreturned() };
      } else {
        calls.clear();
        return item.kind === "end" ? { kind: "end", result: item.result } : { kind: "failed", error: item.error };
      }
    }
  }

  /** Resolves once the turn reported the result of call `toolCallId`, or after `timeoutMs`. Never rejects. */
  toolResultSeen(toolCallId: string, timers: Timers, timeoutMs: number): Promise<void> {
    if (this.#results.has(toolCallId)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        timers.clearTimeout(timer);
        this.#resultWaiters.delete(toolCallId);
        resolve();
      };
      const timer = timers.setTimeout(done, timeoutMs);
      this.#resultWaiters.set(toolCallId, done);
    });
  }

  /**
   * The next item (waits for one), or `undefined` once `signal` aborted: a consumer that stops
   * waiting takes nothing, so no item is lost to it. One consumer at a time.
   */
  next(signal?: AbortSignal): Promise<InboxItem | undefined> {
    if (signal?.aborted) return Promise.resolve(undefined);
    const item = this.#items.shift();
    if (item !== undefined) return Promise.resolve(this.#taken(item));
    return new Promise((resolve) => {
      const onAbort = (): void => {
        if (this.#waiter === waiter) this.#waiter = undefined;
        resolve(undefined);
      };
      const waiter = (next: InboxItem): void => {
        signal?.removeEventListener("abort", onAbort);
        resolve(this.#taken(next));
      };
      this.#waiter = waiter;
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Tell the calls (and the result waiters) what the turn just reported, in the runtime's order. */
  #track(event: TurnEvent): void {
    if (event.type === "tool-call") {
      // A reused id (providers say `call_0` in every response) is a new call: its result is not seen yet.
      this.#results.delete(event.toolCallId);
      const tool = event.owner === "client" ? this.#tools.get(event.toolName) : undefined;
      if (tool !== undefined) this.#calls.announce(event.toolCallId, tool, event.input);
    } else if (event.type === "tool-result") {
      this.#results.add(event.toolCallId);
      this.#resultWaiters.get(event.toolCallId)?.();
      if (event.owner === "client") this.#calls.resultReported(event.toolCallId);
    }
  }

  #taken(item: InboxItem): InboxItem {
    if (item.kind === "calls") this.#callsQueued = false;
    return item;
  }

  #push(item: InboxItem): void {
    if (item.kind === "event") this.#track(item.event);
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter(item);
    } else this.#items.push(item);
  }
}
