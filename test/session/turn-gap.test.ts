/**
 * The gap between a turn's end and the next turn's input (`turnGapMs`): in every mode but
 * `unrestricted` the next input is written no sooner than the gap after the previous turn ended
 * (Letta Code 0.32.18 loses a permission request asked in a turn that follows the previous one
 * within its cleanup window, and that turn never ends: integration/back-to-back-turns-real-peer.test.ts);
 * in `unrestricted` nothing waits; a session closed during the gap never writes the input.
 */
import { describe, expect, it } from "vitest";
import { scriptedRuntime, sessionOn } from "./session-support.js";

/** A runtime whose script notes when each turn's input arrived. */
async function timedRuntime() {
  const arrivals: number[] = [];
  const runtime = await scriptedRuntime({
    script: async (turn) => {
      arrivals.push(performance.now());
      await turn.say("ok");
    },
  });
  return { runtime, arrivals };
}

describe("turnGapMs: the next input waits out the gap after a turn's end", () => {
  it("default mode (strict): the second send's input arrives no sooner than the gap after the first turn ended", async () => {
    const { runtime, arrivals } = await timedRuntime();
    const session = await sessionOn(runtime, { turnGapMs: 400 });
    await session.send("one").result;
    const ended = performance.now();
    const second = session.send("two");
    expect((await second.result).text).toBe("ok");
    expect(arrivals).toHaveLength(2);
    // Timers may fire a millisecond early against performance.now(); the gap is 400.
    expect(arrivals[1]! - ended).toBeGreaterThanOrEqual(390);
  });

  it('mode "unrestricted": nothing is asked, so no gap is kept', async () => {
    const { runtime, arrivals } = await timedRuntime();
    const session = await sessionOn(runtime, { mode: "unrestricted", turnGapMs: 5_000 });
    await session.send("one").result;
    const ended = performance.now();
    await session.send("two").result;
    expect(arrivals[1]! - ended).toBeLessThan(1_000);
  });

  it("a send long after the last turn ended waits for nothing", async () => {
    const { runtime, arrivals } = await timedRuntime();
    const session = await sessionOn(runtime, { turnGapMs: 200 });
    await session.send("one").result;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = performance.now();
    await session.send("two").result;
    expect(arrivals[1]! - sent).toBeLessThan(150);
  });

  it("closed during the gap: the waiting turn fails ABORTED and its input is never written", async () => {
    const { runtime, arrivals } = await timedRuntime();
    const session = await sessionOn(runtime, { turnGapMs: 5_000 });
    await session.send("one").result;
    const waiting = session.send("two");
    const started = performance.now();
    await session.close();
    await expect(waiting.result).rejects.toMatchObject({ code: "ABORTED" });
    // close() did not wait the gap out, and the runtime never got the second input.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(arrivals).toHaveLength(1);
  });

  it("turnGapMs is checked: a negative or fractional gap is INVALID_OPTIONS", async () => {
    const { runtime } = await timedRuntime();
    await expect(sessionOn(runtime, { turnGapMs: -1 })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    await expect(sessionOn(runtime, { turnGapMs: 1.5 })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
  });
});
