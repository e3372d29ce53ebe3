/**
 * Conversations shaped like real ones over the scripted runtime: several turns in a row with no
 * pause, a model that takes longer than a second per reply, and the runtime's lying loop status
 * (every status of a turn that follows the previous one closely reads `WAITING_ON_INPUT` with no
 * runs — as the real runtime 0.32.18 does). A turn must end only when the runtime ends it.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../packages/toolrelay/src/index.js";
import { scriptedRuntime, sessionOn } from "./session-support.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const work = defineTool({
  name: "work",
  description: "Does slow work",
  inputSchema: z.object({ n: z.number() }),
  execute: async ({ n }) => {
    await sleep(300);
    return `worked ${n}`;
  },
});

describe("session: many turns in a row against a slow model and a lying loop status", () => {
  it("three send()s back to back: each turn's text is the model's final text, and each ends only on its own turn_finished", async () => {
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        const n = Number(JSON.stringify(turn.messages).match(/turn (\d)/)?.[1]);
        await sleep(1_200); // the model thinks for longer than any idle settle delay
        await turn.say("Working on it.");
        const result = await turn.callTool("work", { n });
        await sleep(1_200);
        await turn.say(` done: ${result.toolReturn}`);
      },
    });
    // No gap before each input (turnGapMs, which keeps the runtime's cleanup window clear): the
    // inputs follow the ends at once, so that the runtime lies about the loop status.
    const session = await sessionOn(runtime, { tools: [work], turnGapMs: 0 });
    for (const n of [1, 2, 3]) {
      const result = await session.send(`turn ${n}`).result;
      expect(result.stopReason).toBe("end_turn");
      expect(result.text).toBe(`Working on it. done: worked ${n}`);
      expect(result.events.map((event) => event.type)).toEqual(["assistant", "tool-call", "tool-result", "assistant", "stop"]);
    }
    // The runtime did lie: after the first turn_finished, no loop status named a run or a running call.
    const sent = runtime.sentFrames.map(
      (record) => record.frame as { type?: string; loop_status?: { active_run_ids: string[]; executing_tool_call_ids: string[] } },
    );
    const firstEnd = sent.findIndex((frame) => frame.type === "turn_finished");
    const before = sent.slice(0, firstEnd).filter((frame) => frame.type === "update_loop_status");
    const after = sent.slice(firstEnd).filter((frame) => frame.type === "update_loop_status");
    expect(before.some((frame) => frame.loop_status!.executing_tool_call_ids.length > 0)).toBe(true);
    expect(after.length).toBeGreaterThan(4);
    expect(
      after.every((frame) => frame.loop_status!.active_run_ids.length === 0 && frame.loop_status!.executing_tool_call_ids.length === 0),
    ).toBe(true);
  }, 30_000);
});
