/**
 * Whose end a `turn_finished` is (`TurnOwnership`, packages/toolrelay/src/session/turn-ownership.ts), held by the
 * mutants of it that survived `npm run mutate` (docs/reliability.md, "Mutation testing"): a run
 * that lists several messages, a mapped run listed again without its map entry, the cloud relay's
 * reordering (`event_seq`), a `run_id` of "", forgiving a message not owed, and the three bounds
 * (16 owed messages, 8 held ends, 256 runs; the constants are the module's own).
 */
import { describe, expect, it } from "vitest";
import { TurnOwnership } from "../../packages/toolrelay/src/session/turn-ownership.js";
import type { TurnFinishedFrame, UpdateLoopStatusFrame } from "../../packages/toolrelay/src/wire/index.js";

type LoopStatus = UpdateLoopStatusFrame["loop_status"];

const status = (byRun: Record<string, string[]>, active: string[] = Object.keys(byRun)): LoopStatus =>
  ({ status: "PROCESSING_API_RESPONSE", active_run_ids: active, client_message_ids_by_run_id: byRun }) as LoopStatus;

const finished = (runId?: string): TurnFinishedFrame =>
  ({
    type: "turn_finished",
    turn_id: `turn-${runId ?? "none"}`,
    ...(runId === undefined ? {} : { run_id: runId }),
    stop_reason: "end_turn",
  }) as TurnFinishedFrame;

const owners = (resolved: ReturnType<TurnOwnership["learn"]>) => resolved.map(({ frame, owner }) => [frame.run_id, owner]);

describe("TurnOwnership", () => {
  it("a run that lists several messages is the active message's, wherever it stands in the list", () => {
    const ownership = new TurnOwnership();
    ownership.owe("cm-1");
    ownership.owe("cm-2");
    ownership.learn(status({ "run-1": ["cm-1", "cm-2"] }), "cm-2", undefined);
    expect(ownership.messageOf("run-1")).toBe("cm-2");
    expect(ownership.ownerOfEnd(finished("run-1"), undefined)).toEqual({ kind: "message", clientMessageId: "cm-2" });
  });

  it("a run mapped to a message keeps it when a later status lists it active without its map entry", () => {
    const ownership = new TurnOwnership();
    ownership.owe("cm-1");
    ownership.learn(status({ "run-1": ["cm-1"] }), "cm-1", 1);
    ownership.learn(status({}, ["run-1"]), "cm-1", 2);
    expect(ownership.messageOf("run-1")).toBe("cm-1");
    expect(ownership.ownerOfEnd(finished("run-1"), 3)).toEqual({ kind: "message", clientMessageId: "cm-1" });
  });

  it("the relay's reordering: an end held for an unmapped run outlives a status sent before it, and goes to its message once a status maps the run", () => {
    const ownership = new TurnOwnership();
    ownership.owe("cm-1");
    expect(ownership.ownerOfEnd(finished("run-1"), 10)).toEqual({ kind: "unresolved" });
    expect(ownership.learn(status({}, []), "cm-1", 9)).toEqual([]); // sent before the end, delivered after it
    expect(owners(ownership.learn(status({ "run-1": ["cm-1"] }), "cm-1", 11))).toEqual([
      ["run-1", { kind: "message", clientMessageId: "cm-1" }],
    ]);
    expect(ownership.owed).toEqual([]);
    expect(ownership.learn(status({ "run-1": ["cm-1"] }), "cm-1", 12)).toEqual([]); // given once, not held any more
  });

  it("an end that a status sent after it does not map is the runtime's own, settled once (a later mapping does not bring it back)", () => {
    for (const [endSeq, laterSeq] of [
      [10, 11],
      [undefined, undefined],
      [10, undefined],
      [undefined, 11],
    ] as const) {
      const ownership = new TurnOwnership();
      ownership.owe("cm-1");
      expect(ownership.ownerOfEnd(finished("run-own"), endSeq)).toEqual({ kind: "unresolved" });
      expect(owners(ownership.learn(status({}, []), "cm-1", laterSeq))).toEqual([["run-own", { kind: "none" }]]);
      expect(ownership.learn(status({ "run-own": ["cm-1"] }), "cm-1", laterSeq === undefined ? undefined : laterSeq + 1)).toEqual([]);
    }
  });

  it('a run_id of "" is no run: the end is the oldest owed message\'s', () => {
    const ownership = new TurnOwnership();
    ownership.owe("cm-1");
    expect(ownership.ownerOfEnd(finished(""), undefined)).toEqual({ kind: "message", clientMessageId: "cm-1" });
  });

  it("an end without run_id while nothing is owed is nobody's; so is the end of an active run no message started (the runtime's own turn)", () => {
    const ownership = new TurnOwnership();
    expect(ownership.ownerOfEnd(finished(), undefined)).toEqual({ kind: "none" });
    ownership.owe("cm-1");
    ownership.learn(status({}, ["run-own"]), "cm-1", 1);
    expect(ownership.ownerOfEnd(finished("run-own"), 2)).toEqual({ kind: "none" });
    expect(ownership.owed).toEqual(["cm-1"]);
  });

  it("owing a message twice owes it once; forgiving a message that is not owed changes nothing", () => {
    const ownership = new TurnOwnership();
    ownership.owe("cm-1");
    ownership.owe("cm-1");
    ownership.owe("cm-2");
    ownership.forgive("cm-3");
    expect(ownership.owed).toEqual(["cm-1", "cm-2"]);
  });

  it("clear() (the session is closing) forgets the owed messages and the held ends", () => {
    const ownership = new TurnOwnership();
    ownership.owe("cm-1");
    ownership.ownerOfEnd(finished("run-1"), 1);
    ownership.clear();
    expect(ownership.owed).toEqual([]);
    expect(ownership.learn(status({ "run-1": ["cm-1"] }), "cm-1", 2)).toEqual([]);
  });

  it("owes at most 16 messages (the oldest goes first)", () => {
    const ownership = new TurnOwnership();
    for (let index = 0; index <= 16; index++) ownership.owe(`cm-${index}`);
    expect(ownership.owed).toEqual(Array.from({ length: 16 }, (_, index) => `cm-${index + 1}`));
  });

  it("holds at most 8 ends of unmapped runs (the oldest goes first)", () => {
    const ownership = new TurnOwnership();
    const runs = Array.from({ length: 9 }, (_, index) => `run-${index}`);
    for (const [index, run] of runs.entries()) ownership.ownerOfEnd(finished(run), index);
    const resolved = ownership.learn(status(Object.fromEntries(runs.map((run) => [run, ["cm-x"]]))), undefined, 100);
    expect(resolved.map(({ frame }) => frame.run_id)).toEqual(runs.slice(1));
  });

  it("remembers at most 256 runs (the oldest goes first)", () => {
    const ownership = new TurnOwnership();
    for (let index = 0; index <= 256; index++) ownership.learn(status({ [`run-${index}`]: [`cm-${index}`] }), undefined, index);
    expect(ownership.messageOf("run-0")).toBeUndefined();
    expect(ownership.messageOf("run-1")).toBe("cm-1");
  });
});
