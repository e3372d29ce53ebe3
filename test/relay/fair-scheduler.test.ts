import { describe, expect, it } from "vitest";
import { FairScheduler, type SliceSource } from "../../packages/relay/src/fair-scheduler.js";

/** A source with `slices` slices of work that records each one it runs. */
function source(name: string, slices: number, log: string[]): SliceSource {
  let left = slices;
  return {
    runSlice() {
      log.push(name);
      return --left > 0;
    },
  };
}

/** A scheduler whose turns run only when the test says so. */
function manual(): { scheduler: FairScheduler; turn(): boolean } {
  const queued: Array<() => void> = [];
  const scheduler = new FairScheduler({ defer: (callback) => void queued.push(callback) });
  return {
    scheduler,
    turn() {
      const next = queued.shift();
      next?.();
      return next !== undefined;
    },
  };
}

describe("FairScheduler", () => {
  it("gives every tenant one slice per turn, whatever its number of connections, and round-robins inside a tenant", () => {
    const log: string[] = [];
    const { scheduler, turn } = manual();
    scheduler.wake("flooder", source("flood-1", 6, log));
    scheduler.wake("flooder", source("flood-2", 6, log));
    scheduler.wake("flooder", source("flood-3", 6, log));
    scheduler.wake("victim", source("victim", 2, log));
    const turns: string[][] = [];
    while (turn()) turns.push(log.splice(0));
    expect(turns.slice(0, 3)).toEqual([["flood-1", "victim"], ["flood-2", "victim"], ["flood-3"]]);
    expect(turns.flat().filter((name) => name.startsWith("flood"))).toHaveLength(18);
    expect(turns).toHaveLength(18);
    expect(scheduler.pending).toBe(0);
  });

  it("a victim waking up behind a long flood is served in the next turn", () => {
    const log: string[] = [];
    const { scheduler, turn } = manual();
    scheduler.wake("flooder", source("flood", 1_000, log));
    for (let index = 0; index < 10; index++) turn();
    log.length = 0;
    scheduler.wake("victim", source("victim", 1, log));
    turn();
    expect(log).toEqual(["flood", "victim"]);
  });

  it("waking a source that already waits does not give it a second place", () => {
    const log: string[] = [];
    const { scheduler, turn } = manual();
    const once = source("once", 1, log);
    scheduler.wake("t", once);
    scheduler.wake("t", once);
    while (turn());
    expect(log).toEqual(["once"]);
  });

  it("a slice that throws is reported and its source dropped; the others go on", () => {
    const log: string[] = [];
    const errors: unknown[] = [];
    const queued: Array<() => void> = [];
    const scheduler = new FairScheduler({ defer: (callback) => void queued.push(callback), onError: (error) => errors.push(error) });
    scheduler.wake("bad", {
      runSlice: () => {
        throw new Error("boom");
      },
    });
    scheduler.wake("good", source("good", 2, log));
    while (queued.length > 0) queued.shift()!();
    expect(errors).toHaveLength(1);
    expect(log).toEqual(["good", "good"]);
  });
});
