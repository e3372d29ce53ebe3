/**
 * Test helpers for the call table: a recording `deliver` with a switchable
 * link, deferred `run` functions, and key builders. Uses the global (fake)
 * timers through `systemTimers`.
 */
import type { CallKey, CallLateEvent, CallOutcome, CallSettledEvent, CallTableOptions } from "../../src/calls/index.js";
import { CallTable } from "../../src/calls/index.js";
import type { ToolCallResponseBody } from "../../src/wire/index.js";

export interface Frame {
  requestId: string;
  response: ToolCallResponseBody;
}

export interface Harness {
  table: CallTable;
  /** Frames actually written (deliver returned true). */
  frames: Frame[];
  /** Every deliver attempt, written or not. */
  attempts: Frame[];
  settled: CallSettledEvent[];
  late: CallLateEvent[];
  callbackErrors: unknown[];
  /** When false, deliver returns false (nothing written). */
  link: { up: boolean };
}

export function createHarness(options: Partial<CallTableOptions> = {}): Harness {
  const harness: Omit<Harness, "table"> = { frames: [], attempts: [], settled: [], late: [], callbackErrors: [], link: { up: true } };
  const table = new CallTable({
    deliver(requestId, response) {
      harness.attempts.push({ requestId, response });
      if (!harness.link.up) return false;
      harness.frames.push({ requestId, response });
      return true;
    },
    onSettled: (event) => harness.settled.push(event),
    onLate: (event) => harness.late.push(event),
    onCallbackError: (error) => harness.callbackErrors.push(error),
    ...options,
  });
  return { ...harness, table };
}

export interface DeferredRun {
  run(signal: AbortSignal): Promise<CallOutcome>;
  resolve(outcome: CallOutcome): void;
  reject(error: unknown): void;
  /** How many times `run` was called. */
  readonly calls: number;
  /** The signal of the last call. */
  readonly signal: AbortSignal | undefined;
}

/** A `run` that waits until the test resolves or rejects it (each call gets its own promise; resolve settles all). */
export function deferredRun(): DeferredRun {
  let calls = 0;
  let signal: AbortSignal | undefined;
  const resolvers: Array<{ resolve(outcome: CallOutcome): void; reject(error: unknown): void }> = [];
  return {
    run(callSignal) {
      calls++;
      signal = callSignal;
      return new Promise<CallOutcome>((resolve, reject) => resolvers.push({ resolve, reject }));
    },
    resolve(outcome) {
      for (const resolver of resolvers) resolver.resolve(outcome);
    },
    reject(error) {
      for (const resolver of resolvers) resolver.reject(error);
    },
    get calls() {
      return calls;
    },
    get signal() {
      return signal;
    },
  };
}

export function callKey(toolCallId: string, scope: Partial<CallKey> = {}): CallKey {
  return { connectionId: "connection-1", agentId: "agent-1", conversationId: "conversation-1", toolCallId, ...scope };
}

export function ok(text: string): CallOutcome {
  return { kind: "ok", content: [{ type: "text", text }] };
}

/** Let pending promise reactions run (a few microtask turns). */
export async function flushMicrotasks(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await Promise.resolve();
}
