import { describe, expect, it } from "vitest";
import { ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import type { TurnResult } from "../../packages/toolrelay/src/session/turn.js";
import { TURN_FAULTS, turnFault, type TurnToolCall } from "../../packages/toolrelay/src/sidecar/turn-fault.js";

const result = (stopReason: string, error?: string): TurnResult => ({
  stopReason,
  text: "",
  events: [],
  toolOutputs: [],
  ...(error === undefined ? {} : { error }),
});
const finished = (stopReason: string, options: { aborted?: boolean; error?: string } = {}) => ({
  kind: "finished" as const,
  result: result(stopReason, options.error),
  aborted: options.aborted ?? false,
});
const failed = (error: unknown) => ({ kind: "failed" as const, error });
const call = (outcome: TurnToolCall["outcome"]): TurnToolCall => ({ tool: "t", outcome });

describe("the fault table", () => {
  it("names every way a turn ends", () => {
    const cases: Array<[Parameters<typeof turnFault>[0], TurnToolCall[], string]> = [
      [finished("end_turn"), [call("ok")], "ok"],
      [finished("end_turn"), [call("ok"), call("tool_error")], "tool_error"],
      [finished("end_turn"), [call("unknown_tool")], "tool_error"],
      [finished("end_turn"), [call("input_too_large")], "tool_error"],
      [finished("end_turn"), [call("busy")], "tool_error"],
      [finished("end_turn"), [call("tool_error"), call("timeout")], "tool_timeout"],
      [finished("end_turn"), [call("disconnected")], "link_lost"],
      [finished("cancelled", { aborted: true }), [call("cancelled")], "cancelled"],
      [finished("cancelled"), [], "cancelled"],
      [finished("end_turn", { aborted: true }), [], "cancelled"],
      [finished("error", { error: "model exploded" }), [call("timeout")], "runtime_error"],
      [finished("llm_api_error"), [], "runtime_error"],
      [finished("end_turn", { error: "a loop error" }), [], "runtime_error"],
      [finished("max_steps"), [], "incomplete"],
      [finished("max_steps"), [call("tool_error")], "tool_error"],
      [failed(new ToolrelayError("CONNECTION_CLOSED", "lost")), [call("ok")], "link_lost"],
      [failed(new ToolrelayError("INPUT_UNCONFIRMED", "unconfirmed")), [], "input_unconfirmed"],
      [failed(new ToolrelayError("REQUEST_FAILED", "refused")), [], "input_refused"],
      [failed(new ToolrelayError("ABORTED", "the session was closed")), [], "session_closed"],
      [failed(new ToolrelayError("TURN_IN_PROGRESS", "busy")), [], "turn_in_progress"],
      [failed(new Error("a bug")), [], "internal"],
      [failed("a thrown string"), [], "internal"],
    ];
    const seen = new Set<string>();
    for (const [ending, calls, fault] of cases) {
      const verdict = turnFault(ending, calls);
      expect(verdict.fault, JSON.stringify({ ending, calls })).toBe(fault);
      if (fault === "ok") expect(verdict.message).toBeUndefined();
      else expect(verdict.message).toEqual(expect.any(String));
      seen.add(fault);
    }
    expect([...seen].sort()).toEqual([...TURN_FAULTS].sort());
  });

  it("keeps the runtime's message for a runtime error", () => {
    expect(turnFault(finished("error", { error: "model exploded" }), [])).toEqual({ fault: "runtime_error", message: "model exploded" });
  });
});
