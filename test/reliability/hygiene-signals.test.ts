/**
 * One caller signal reused for many turns (`send(text, { signal })`): its abort
 * listeners go back to their baseline and no MaxListenersExceededWarning is
 * emitted. (Tool calls hold no caller listener at all: the session's own signal
 * closes the session, and each call's signal is created only when its tool reads it.)
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSession, type Session } from "../../packages/toolrelay/src/index.js";
import { startScriptedRuntime, type ScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import { letTimePass } from "./support/wait.js";

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

/** Warnings are emitted on the next tick: let a little time pass on purpose (none may come), then read them. */
async function maxListenerWarnings(): Promise<Error[]> {
  await letTimePass(20);
  return warnings.filter((warning) => warning.name === "MaxListenersExceededWarning");
}

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
      // The scripted runtime has no cleanup window after a turn (the real one's, docs/approvals.md):
      // the default 1 s gap before each next input would only make 500 turns take 500 s.
      turnGapMs: 0,
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
