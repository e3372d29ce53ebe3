/**
 * The input-write path of `TurnStarter` (packages/toolrelay/src/session/turn-starter.ts), held by the mutants of it
 * that survived `npm run mutate` (docs/reliability.md, "Mutation testing"): the starter alone, on a
 * stand-in link and request tracker whose answers each test chooses, with the real `TurnTracker`
 * (which message the runtime owes an end) and fake timers.
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { CallTable } from "../../packages/toolrelay/src/calls/index.js";
import { ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import type { RequestTracker } from "../../packages/toolrelay/src/transport/request-tracker.js";
import { TurnStarter, type TurnStarterOptions } from "../../packages/toolrelay/src/session/turn-starter.js";
import { TurnTracker } from "../../packages/toolrelay/src/session/turn-tracker.js";

const RUNTIME = { agent_id: "agent-1", conversation_id: "conversation-1" };

type Answer = (frame: { type: string; request_id: string; payload?: unknown }) => Promise<unknown>;

interface Rig {
  starter: TurnStarter;
  turns: TurnTracker;
  link: { state: string };
  /** Frames handed to the request tracker, in order. */
  sent: Array<{ type: string; request_id: string; payload?: unknown }>;
  inputs(): number;
  /** How the stand-in tracker answers the next requests (default: input accepted, abort confirmed). */
  answer: Answer;
  errors: ToolrelayError[];
}

/** Every rig of the running test: closed after it, so no turn is left running. */
const rigs: Rig[] = [];

function rig(reassertTools?: () => Promise<void>): Rig {
  const link = { state: "open" };
  const sent: Rig["sent"] = [];
  const errors: ToolrelayError[] = [];
  const turns = new TurnTracker({
    timers: systemTimers,
    runtime: () => RUNTIME,
    isClientTool: () => false,
    pendingCalls: () => 0,
    probe: () => undefined,
    stallProbeMs: 0,
  });
  const rigged: Rig = {
    starter: undefined as unknown as TurnStarter,
    turns,
    link,
    sent,
    inputs: () => sent.filter((frame) => frame.type === "input").length,
    answer: async (frame) =>
      frame.type === "input"
        ? { type: "input_accepted", request_id: frame.request_id, accepted: true }
        : { type: "abort_message_response", request_id: frame.request_id, aborted: true },
    errors,
  };
  const requests = {
    request: (frame: Rig["sent"][number]) => {
      sent.push(frame);
      return rigged.answer(frame);
    },
  } as unknown as RequestTracker;
  const options = {
    link,
    timers: systemTimers,
    observer: { turnStarted: () => undefined },
    requestTimeoutMs: 1_000,
    requests,
    registration: { reassertTools: reassertTools ?? (async () => undefined) },
    own: { scope: RUNTIME },
    turns,
    calls: { cancel: () => 0 } as unknown as CallTable,
    reassertToolsEachTurn: reassertTools !== undefined,
    turnGapMs: 0,
    onError: (error: ToolrelayError) => void errors.push(error),
  } as unknown as TurnStarterOptions;
  rigged.starter = new TurnStarter(options);
  rigs.push(rigged);
  return rigged;
}

const notWritten = () =>
  new ToolrelayError("CONNECTION_CLOSED", "cannot send input: its socket is closing; nothing was written", { details: { written: false } });

/** Let the starter's promise chains run. */
async function settle(): Promise<void> {
  for (let round = 0; round < 10; round++) await Promise.resolve();
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(async () => {
  for (const { starter, turns } of rigs.splice(0)) {
    starter.close(new ToolrelayError("ABORTED", "the test ended"));
    turns.stop();
  }
  await settle();
  expect(vi.getTimerCount()).toBe(0);
  vi.useRealTimers();
});

describe("TurnStarter: the input is written once", () => {
  it("the runtime owes the written input's client message id one end", async () => {
    const r = rig();
    r.starter.start("hello", {});
    await settle();
    const frame = r.sent.find((sent) => sent.type === "input")!;
    const messageId = (frame.payload as { messages: Array<{ client_message_id: string }> }).messages[0]!.client_message_id;
    expect(messageId).toMatch(/\S/);
    expect(r.turns.owedEnds).toEqual([messageId]);
  });

  it("input_accepted never comes (the link stays up): the turn fails INPUT_UNCONFIRMED with the cause, and the input is never written again", async () => {
    const r = rig();
    const timeout = new ToolrelayError("REQUEST_TIMEOUT", "no input_accepted for input within 1000 ms");
    r.answer = async () => {
      throw timeout;
    };
    const turn = r.starter.start("hello", {});
    await expect(turn.result).rejects.toMatchObject({ code: "INPUT_UNCONFIRMED", cause: timeout });
    r.answer = rig().answer;
    r.starter.writeUnwrittenInput(); // a reconnect after it
    await settle();
    expect(r.inputs()).toBe(1);
  });

  it("the link says open but its socket refused the write (closing): the turn waits, owes nothing meanwhile, and the input is written once when the link is back", async () => {
    const r = rig();
    const accept = r.answer;
    r.answer = async () => {
      throw notWritten();
    };
    const turn = r.starter.start("hello", {});
    await settle();
    expect(turn.done).toBe(false);
    expect(r.turns.owedEnds).toEqual([]);
    r.answer = accept;
    r.starter.writeUnwrittenInput();
    await settle();
    expect(r.inputs()).toBe(2); // the refused attempt, then the one write
    expect(turn.done).toBe(false);
    expect(r.turns.owedEnds).toHaveLength(1);
    r.starter.close(new ToolrelayError("ABORTED", "the session was closed"));
  });

  it("the runtime refuses the message: the turn fails REQUEST_FAILED with its reason, and the message is owed nothing", async () => {
    const r = rig();
    r.answer = async (frame) => ({ type: "input_accepted", request_id: frame.request_id, accepted: false, error: "the agent is busy" });
    const turn = r.starter.start("hello", {});
    await expect(turn.result).rejects.toMatchObject({ code: "REQUEST_FAILED", message: expect.stringContaining("the agent is busy") });
    expect(r.turns.owedEnds).toEqual([]);
  });

  it("a turn whose input never went out fails with the link's error when the link is lost, not INPUT_UNCONFIRMED", async () => {
    const r = rig();
    r.link.state = "reconnecting";
    const turn = r.starter.start("hello", {});
    await settle();
    expect(r.inputs()).toBe(0);
    r.starter.linkLost(new ToolrelayError("CONNECTION_CLOSED", "the link to the runtime was lost during the turn"));
    await expect(turn.result).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
  });

  it("aborted while its input waits for the link: the input is never written, even when the link is back before the turn ended", async () => {
    const r = rig();
    r.link.state = "reconnecting";
    const turn = r.starter.start("hello", {});
    await settle();
    void turn.abort();
    await settle();
    expect(turn.done).toBe(false); // still waiting for the runtime's end (or the settle time)
    r.link.state = "open";
    r.starter.writeUnwrittenInput();
    await settle();
    expect(r.inputs()).toBe(0);
    r.starter.close(new ToolrelayError("ABORTED", "the session was closed"));
  });

  it("a link closed for good: start throws CONNECTION_CLOSED", () => {
    const r = rig();
    r.link.state = "closed";
    expect(() => r.starter.start("hello", {})).toThrow(expect.objectContaining({ code: "CONNECTION_CLOSED" }));
  });
});

describe("TurnStarter: a turn that ended before its input went out", () => {
  it("closed while the tools are re-sent before the turn (reassertToolsEachTurn): the input is never written", async () => {
    let toolsSent!: () => void;
    const r = rig(
      () =>
        new Promise<void>((resolve) => {
          toolsSent = resolve;
        }),
    );
    const turn = r.starter.start("hello", {});
    await settle();
    r.starter.close(new ToolrelayError("ABORTED", "the session was closed"));
    await expect(turn.result).rejects.toMatchObject({ code: "ABORTED" });
    toolsSent();
    await settle();
    expect(r.inputs()).toBe(0);
    expect(r.turns.owedEnds).toEqual([]);
  });

  it("written when the link is back, then input_accepted never comes: the turn fails INPUT_UNCONFIRMED", async () => {
    const r = rig();
    r.link.state = "reconnecting";
    const turn = r.starter.start("hello", {});
    await settle();
    r.link.state = "open";
    r.answer = async () => {
      throw new ToolrelayError("REQUEST_TIMEOUT", "no input_accepted for input within 1000 ms");
    };
    r.starter.writeUnwrittenInput();
    await expect(turn.result).rejects.toMatchObject({ code: "INPUT_UNCONFIRMED" });
    expect(r.inputs()).toBe(1);
  });
});

describe("TurnStarter: abort", () => {
  it("starter.abort() (session.abort()) aborts the running turn, and does nothing without one", async () => {
    const r = rig();
    await r.starter.abort();
    expect(r.sent).toEqual([]);
    const turn = r.starter.start("hello", {});
    await settle();
    void r.starter.abort();
    await settle();
    expect(r.sent.map((frame) => frame.type)).toEqual(["input", "abort_message"]);
    turn.finish("cancelled");
    await settle();
    await r.starter.abort();
    expect(r.sent.map((frame) => frame.type)).toEqual(["input", "abort_message"]);
  });

  it("the runtime confirms the abort but never ends the turn: it ends cancelled after the settle time", async () => {
    const r = rig();
    const turn = r.starter.start("hello", {});
    await settle();
    const aborted = turn.abort();
    await settle();
    expect(turn.done).toBe(false);
    await vi.advanceTimersByTimeAsync(2_000);
    await aborted;
    await expect(turn.result).resolves.toMatchObject({ stopReason: "cancelled" });
  });

  it("the runtime ends the turn: abort() resolves at once and leaves no timer", async () => {
    const r = rig();
    const turn = r.starter.start("hello", {});
    await settle();
    let resolved = false;
    const aborted = turn.abort().then(() => {
      resolved = true;
    });
    await settle();
    turn.finish("cancelled"); // what the tracker does on the runtime's turn_finished
    await settle();
    expect(resolved).toBe(true);
    await aborted;
    expect(vi.getTimerCount()).toBe(0);
  });

  it("close() while an abort waits for the turn's end: the abort resolves and no timer is left", async () => {
    const r = rig();
    const turn = r.starter.start("hello", {});
    await settle();
    let resolved = false;
    const aborted = turn.abort().then(() => {
      resolved = true;
    });
    await settle();
    expect(vi.getTimerCount()).toBe(1);
    r.starter.close(new ToolrelayError("ABORTED", "the session was closed"));
    await settle();
    expect(resolved).toBe(true);
    await aborted;
    expect(vi.getTimerCount()).toBe(0);
  });

  it("an abort the runtime does not confirm is reported (onError)", async () => {
    const r = rig();
    const turn = r.starter.start("hello", {});
    await settle();
    r.answer = async () => {
      throw new ToolrelayError("REQUEST_TIMEOUT", "no abort_message_response within 1000 ms");
    };
    void turn.abort();
    await settle();
    expect(r.errors.map((error) => error.code)).toEqual(["REQUEST_TIMEOUT"]);
    r.starter.close(new ToolrelayError("ABORTED", "the session was closed"));
  });

  it("an already aborted signal aborts the turn at once", async () => {
    const r = rig();
    r.starter.start("hello", { signal: AbortSignal.abort() });
    await settle();
    expect(r.sent.map((frame) => frame.type)).toContain("abort_message");
    r.starter.close(new ToolrelayError("ABORTED", "the session was closed"));
  });

  it("the signal's abort listener is removed when the turn ends (a long-lived signal keeps none)", async () => {
    const r = rig();
    const controller = new AbortController();
    const turn = r.starter.start("hello", { signal: controller.signal });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    turn.finish("end_turn");
    await settle();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
