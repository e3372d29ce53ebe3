/**
 * Mutants of the call table: each re-creates one real mistake at the spot where
 * it would live, as a text patch applied to a COPY of packages/toolrelay/src/ (mutation.test.ts).
 * The model-based schedules must kill every one. Nothing here touches packages/toolrelay/src/.
 */
export interface Mutant {
  name: string;
  /** What the mistake is, in words. */
  mistake: string;
  /** File under packages/toolrelay/src/, the exact text to find (once), and what to put there. */
  file: string;
  find: string;
  replace: string;
}

export const MUTANTS: readonly Mutant[] = [
  {
    name: "reexecuteOnReplay",
    mistake: "a settled call asked for again runs again instead of replaying",
    file: "calls/call-table.ts",
    find: "if (record?.isAskedAgainBy(turn, request.epoch)) return this.#again(record, request);",
    replace: 'if (record !== undefined && record.state === "running") return this.#again(record, request);',
  },
  {
    name: "replayAcrossTurns",
    mistake: "a new model request reusing an answered call's key gets the old answer (the turn and epoch are not looked at)",
    file: "calls/call-record.ts",
    find: "    return answeredBefore && turn === this.turn;",
    replace: "    return true;",
  },
  {
    name: "leakTimer",
    mistake: "a settled call leaves its deadline timer armed",
    file: "calls/call-table.ts",
    find: "    this.#deadlines.release(record);\n",
    replace: "",
  },
  {
    name: "keyByToolCallIdOnly",
    mistake: "the key is the tool call id alone, so scopes collide",
    file: "calls/call-key.ts",
    find: "return left.conversationId === right.conversationId && left.agentId === right.agentId && left.connectionId === right.connectionId;",
    replace: "return true;",
  },
  {
    name: "ignoreInputDigest",
    mistake: "a reused tool call id with another input replays the stale result",
    file: "calls/call-key.ts",
    find: "return left.inputDigest === right.inputDigest && left.toolCallId",
    replace: "return left.toolCallId",
  },
  {
    name: "resendOnSameEpoch",
    mistake: "a request id asked again on the same epoch gets a second frame",
    file: "calls/call-table.ts",
    find: 'known.epoch >= request.epoch)) return "duplicate";',
    replace: 'known.epoch > request.epoch)) return "duplicate";',
  },
  {
    name: "dropHeldOnKeepingEpoch",
    mistake: "answers held while the link was down are dropped although the runtime kept the calls",
    file: "calls/call-table.ts",
    find: 'if (runtimeKeptCalls && (state === "held" ||',
    replace: "if (runtimeKeptCalls && (false ||",
  },
];
