/**
 * One caller signal reused for many calls and turns: its abort listeners go
 * back to their baseline and no MaxListenersExceededWarning is emitted.
 * - CallTable (src/calls): `request({ ..., signal })` 1,000 times in a row, and
 *   1,000 at once (one listener for all of them), then aborted;
 * - Session: `send(text, { signal })` with the same signal over many turns.
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CallTable, type CallKey, type CallOutcome } from "../../src/calls/index.js";
import { createSession, type Session } from "../../src/index.js";
import { startScriptedRuntime, type ScriptedRuntime } from "../../src/testing/index.js";
import { sleep } from "./support/wait.js";

const CALLS = 1_000;
const TURNS = Number(process.env.SIGNAL_TURNS ?? 500);

/** Everything queued as microtasks (settlements, `finally` cleanups) has run by then. */
const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

let warnings: Error[] = [];
const onWarning = (warning: Error) => void warnings.push(warning);
beforeEach(() => {
  warnings = [];
  process.on("warning", onWarning);
});
afterEach(() => {
  process.off("warning", onWarning);
});

/** Warnings are emitted on the next tick: wait a little, then read them. */
async function maxListenerWarnings(): Promise<Error[]> {
  await sleep(20);
  return warnings.filter((warning) => warning.name === "MaxListenersExceededWarning");
}

const keyOf = (index: number): CallKey => ({ connectionId: "c", agentId: "a", conversationId: "v", toolCallId: `call-${index}` });
const ok = (index: number): CallOutcome => ({ kind: "ok", content: [{ type: "text", text: `r${index}` }] });

describe("a caller signal reused by the CallTable", () => {
  it(`${CALLS} calls one after another: abort listeners back to baseline, no warning`, async () => {
    const signal = new AbortController().signal;
    const baseline = getEventListeners(signal, "abort").length;
    const delivered: string[] = [];
    const table = new CallTable({ deliver: (requestId) => (delivered.push(requestId), true) });
    for (let index = 0; index < CALLS; index++) {
      table.request({ requestId: `r-${index}`, key: keyOf(index), toolName: "t", timeoutMs: 5_000, signal, run: async () => ok(index) });
      await nextMacrotask();
      expect(delivered).toHaveLength(index + 1);
      expect(getEventListeners(signal, "abort").length).toBe(baseline);
    }
    expect(table.pendingCount).toBe(0);
    expect(await maxListenerWarnings()).toEqual([]);
    table.close();
  });

  it(`${CALLS} calls at once share one listener; aborting the signal cancels all of them and removes it`, async () => {
    const controller = new AbortController();
    const signal = controller.signal;
    const baseline = getEventListeners(signal, "abort").length;
    const outcomes: string[] = [];
    const callbackSignals: AbortSignal[] = [];
    const table = new CallTable({
      deliver: () => true,
      onSettled: (event) => void outcomes.push(event.outcome.kind),
    });
    for (let index = 0; index < CALLS; index++) {
      table.request({
        requestId: `r-${index}`,
        key: keyOf(index),
        toolName: "t",
        timeoutMs: 60_000,
        signal,
        run: (callbackSignal) =>
          new Promise<CallOutcome>((resolve) => {
            callbackSignals.push(callbackSignal);
            callbackSignal.addEventListener("abort", () => resolve(ok(index)), { once: true });
          }),
      });
    }
    expect(table.pendingCount).toBe(CALLS);
    expect(getEventListeners(signal, "abort").length).toBe(baseline + 1);
    controller.abort(new Error("caller gave up"));
    expect(outcomes).toEqual(Array(CALLS).fill("cancelled"));
    expect(callbackSignals.every((callbackSignal) => callbackSignal.aborted)).toBe(true);
    expect(getEventListeners(signal, "abort").length).toBe(baseline);
    expect(table.pendingCount).toBe(0);
    expect(await maxListenerWarnings()).toEqual([]);
    table.close();
  });
});

describe("a caller signal reused by session.send", () => {
  let runtime: ScriptedRuntime | undefined;
  let session: Session | undefined;
  afterEach(async () => {
    await session?.close();
    await runtime?.close();
    session = undefined;
    runtime = undefined;
  });

  it(`${TURNS} turns with the same signal: abort listeners back to baseline after each turn, no warning`, async () => {
    runtime = await startScriptedRuntime({ script: async (turn) => void (await turn.say(`echo ${turn.userText}`)) });
    const signal = new AbortController().signal;
    session = await createSession({
      backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
      agent: { create: { model: "scripted/signals" } },
      signal,
    });
    // The session itself listens to its own `signal` option (to close on abort): that is the baseline.
    const baseline = getEventListeners(signal, "abort").length;
    let peak = baseline;
    for (let index = 0; index < TURNS; index++) {
      const turn = session.send(`t${index}`, { signal });
      peak = Math.max(peak, getEventListeners(signal, "abort").length);
      const result = await turn.result;
      expect(result.text).toBe(`echo t${index}`);
      await nextMacrotask();
      expect(getEventListeners(signal, "abort").length).toBe(baseline);
    }
    expect(peak).toBe(baseline + 1);
    expect(await maxListenerWarnings()).toEqual([]);
    await session.close();
    expect(getEventListeners(signal, "abort").length).toBe(0);
  }, 60_000);
});
