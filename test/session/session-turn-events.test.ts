/**
 * A session's turn events are the turn's own, on the scripted runtime (which sends what the real
 * runtime sends: subagent deltas on the parent's scope, runtime tool output as snapshots — see
 * test/testing/scripted-runtime-unkind.test.ts for the cross-check, and turn-events-real-peer.test.ts
 * for the same through the real peer's recorded frames).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../packages/toolrelay/src/index.js";
import { scriptedRuntime, sessionOn } from "./session-support.js";

describe("turn events are the turn's own", () => {
  it("a subagent's text never appears in the parent turn: its deltas become subagent events", async () => {
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        await turn.say("Delegating. ");
        await turn.runBuiltinTool(
          "Agent",
          { subagent_type: "general-purpose", description: "look", prompt: "look" },
          "Task running in background",
          { stream: false },
        );
        const subagent = turn.subagent({ description: "look" });
        await subagent.say("SUBAGENT TEXT");
        await subagent.runTool("Bash", { command: "ls" }, "a\nb\n", { toolCallId: "call_1" });
        await subagent.finish(); // the subagent's own stop_reason: end_turn
        await turn.say("Done.");
      },
    });
    const session = await sessionOn(runtime);
    const seen: string[] = [];
    const turn = session.send("delegate");
    for await (const event of turn) seen.push(event.type === "subagent" ? `subagent:${event.event.type}` : event.type);
    const result = await turn.result;

    expect(result.text).toBe("Delegating. Done.");
    expect(result.stopReason).toBe("end_turn");
    expect(seen).toEqual([
      "assistant",
      "tool-call",
      "tool-result",
      "subagent:assistant",
      "subagent:tool-call",
      "subagent:tool-result",
      "assistant",
      "stop",
    ]);
    const own = result.events.filter((event) => event.type === "tool-call");
    expect(own).toEqual([expect.objectContaining({ toolName: "Agent", owner: "runtime" })]);
    const subagent = result.events.filter((event) => event.type === "subagent");
    expect(subagent).toEqual([
      {
        type: "subagent",
        subagentId: expect.stringMatching(/^subagent-/),
        event: expect.objectContaining({ type: "assistant", text: "SUBAGENT TEXT" }),
      },
      {
        type: "subagent",
        subagentId: expect.any(String),
        event: expect.objectContaining({ type: "tool-call", toolName: "Bash", toolCallId: "call_1", owner: "runtime" }),
      },
      {
        type: "subagent",
        subagentId: expect.any(String),
        event: expect.objectContaining({ type: "tool-result", toolName: "Bash", text: "a\nb\n", owner: "runtime" }),
      },
    ]);
  });

  it("a subagent tool named like a client tool is never run here and never counted as the session's", async () => {
    let runs = 0;
    const twin = defineTool({ name: "get_weather", description: "w", inputSchema: z.object({}), execute: () => String(++runs) });
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        const subagent = turn.subagent();
        await subagent.runTool("get_weather", {}, "the subagent's own");
        await subagent.finish();
      },
    });
    const session = await sessionOn(runtime, { tools: [twin] });
    const result = await session.send("go").result;
    expect(runs).toBe(0);
    expect(result.events.filter((event) => event.type === "tool-call" || event.type === "tool-result")).toEqual([]);
    expect(result.events.find((event) => event.type === "subagent" && event.event.type === "tool-call")).toMatchObject({
      event: { owner: "runtime" },
    });
  });

  it("one tool-result per runtime tool call: the streamed snapshots are tool-output events", async () => {
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        await turn.runBuiltinTool("Bash", { command: "count" }, "one\ntwo\nthree\n", { toolCallId: "call_0" });
        await turn.say("counted");
      },
    });
    // The runtime's Bash runs unasked only in the opt-out mode (the default, strict, asks first).
    const session = await sessionOn(runtime, { mode: "unrestricted" });
    const result = await session.send("count").result;
    const tools = result.events.filter((event) => event.type.startsWith("tool"));
    expect(tools.map((event) => event.type)).toEqual(["tool-call", "tool-output", "tool-output", "tool-output", "tool-result"]);
    expect(tools.filter((event) => event.type === "tool-output").map((event) => event.type === "tool-output" && event.text)).toEqual([
      "one",
      "one\ntwo",
      "one\ntwo\nthree",
    ]);
    expect(tools.at(-1)).toEqual({
      type: "tool-result",
      toolCallId: "call_0",
      toolName: "Bash",
      isError: false,
      text: "one\ntwo\nthree\n",
      owner: "runtime",
    });
    expect(result.text).toBe("counted");
  });

  it("a provider that reuses call_0 in every turn: the client tool runs in each turn, and each turn has its own tool-result", async () => {
    const rows: string[] = [];
    const ledger = defineTool({
      name: "ledger_append",
      description: "append a row",
      inputSchema: z.object({ row: z.string() }),
      execute: ({ row }) => {
        rows.push(row);
        return `appended ${row}`;
      },
    });
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        const result = await turn.callTool("ledger_append", { row: turn.userText }, { toolCallId: "call_0" });
        await turn.say(result.toolReturn);
      },
    });
    const session = await sessionOn(runtime, { tools: [ledger] });
    const first = await session.send("row-1").result;
    const second = await session.send("row-2").result;
    expect(rows).toEqual(["row-1", "row-2"]);
    expect([first.text, second.text]).toEqual(["appended row-1", "appended row-2"]);
    expect(second.events.filter((event) => event.type === "tool-result")).toEqual([
      expect.objectContaining({ toolCallId: "call_0", text: "appended row-2" }),
    ]);
  });
});
