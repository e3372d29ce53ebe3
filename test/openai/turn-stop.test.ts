/**
 * Stopping a thread's turn, on a real {@link Turn} whose abort the test controls: one stop at a
 * time, and a request waits for it at most STOP_WAIT_MS (then a 502), with fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { STOP_WAIT_MS, TurnStop } from "../../packages/toolrelay/src/openai/turn-stop.js";
import { Turn } from "../../packages/toolrelay/src/session/turn.js";

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

/** A turn whose abort ends it when the test says (`end()`), as the runtime's turn_finished would. */
function abortableTurn(): { turn: Turn; aborts: () => number; end: () => void } {
  let aborts = 0;
  let ended: () => void = () => undefined;
  const turn = Turn.create((self) => {
    aborts++;
    return new Promise<void>((resolve) => {
      ended = () => {
        self.finish("cancelled");
        resolve();
      };
    });
  });
  return { turn, aborts: () => aborts, end: () => ended() };
}

describe("TurnStop", () => {
  it("no stop under way: settled at once; a turn that is done is not aborted", async () => {
    const stop = new TurnStop(systemTimers);
    await expect(stop.settled()).resolves.toBeUndefined();
    const { turn, aborts } = abortableTurn();
    turn.finish("end_turn");
    await stop.stop(turn, undefined);
    expect(aborts()).toBe(0);
    expect(stop.active).toBe(false);
  });

  it("one abort for every stop of a running turn; a request waits for the turn's end", async () => {
    const stop = new TurnStop(systemTimers);
    const { turn, aborts, end } = abortableTurn();
    const first = stop.stop(turn, undefined);
    const second = stop.stop(turn, undefined);
    expect(aborts()).toBe(1);
    expect(stop.active).toBe(true);
    let settled = false;
    const waiting = stop.settled().then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(STOP_WAIT_MS - 1);
    expect(settled).toBe(false);
    end();
    await Promise.all([first, second, waiting]);
    expect(stop.active).toBe(false);
    expect(turn.done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a turn the runtime never ends: the waiting request gets a 502 after STOP_WAIT_MS", async () => {
    const stop = new TurnStop(systemTimers);
    const { turn, end } = abortableTurn();
    void stop.stop(turn, undefined);
    const waiting = expect(stop.settled()).rejects.toMatchObject({ status: 502, code: "upstream_error" });
    await vi.advanceTimersByTimeAsync(STOP_WAIT_MS);
    await waiting;
    expect(stop.active).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    end();
  });
});
