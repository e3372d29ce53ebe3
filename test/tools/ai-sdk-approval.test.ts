/**
 * An AI SDK tool's `needsApproval` through a session, on the scripted runtime: the session's
 * `canUseTool` is asked (`kind: "client-tool"`) before the call runs; allowed, the tool runs and
 * the app's `output` is its real return value while the model reads its `toModelOutput`; declined,
 * it never runs and the model reads the declined text; a throwing `needsApproval` refuses the call
 * unrun (`failed`); and a session with such a tool and no `canUseTool` is refused at creation.
 * The same against the real app-server: integration/ai-sdk-approval-real-peer.test.ts.
 */
import { tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { deniedText } from "../../packages/toolrelay/src/calls/index.js";
import { fromAiSdkTools, type ApprovalRequest, type ToolCallEndEvent } from "../../packages/toolrelay/src/index.js";
import type { ScriptedToolResult } from "../../packages/toolrelay/src/testing/index.js";
import { scriptedRuntime, sessionOn } from "../session/session-support.js";

/** A "delete the database" tool, as the AI SDK's docs write one, and what its execute saw. */
function dropDatabase(
  needsApproval: boolean | ((input: { database: string }, options: { toolCallId: string }) => boolean | PromiseLike<boolean>) = true,
) {
  const runs: string[] = [];
  const tools = fromAiSdkTools({
    drop_database: tool({
      description: "Drops a database",
      inputSchema: z.object({ database: z.string() }),
      needsApproval,
      execute: async ({ database }) => {
        runs.push(database);
        return { dropped: database, tables: 12 };
      },
      toModelOutput: ({ output }) => ({ type: "text", value: `dropped ${output.dropped} (${output.tables} tables)` }),
    }),
  });
  return { tools, runs };
}

/** A runtime whose model calls drop_database once per turn and records what it read back. */
async function runtimeCallingDrop(database = "production") {
  const results: ScriptedToolResult[] = [];
  const runtime = await scriptedRuntime({
    script: async (turn) => {
      results.push(await turn.callTool("drop_database", { database }, { toolCallId: "call_0" }));
    },
  });
  return { runtime, results };
}

describe("an AI SDK tool's needsApproval through a session", () => {
  it("needsApproval: true asks canUseTool (kind client-tool); allowed, it runs: the app gets the real value, the model the mapped text", async () => {
    const { tools, runs } = dropDatabase();
    const { runtime, results } = await runtimeCallingDrop();
    const asked: ApprovalRequest[] = [];
    const session = await sessionOn(runtime, {
      tools,
      canUseTool: (request) => {
        asked.push(request);
        return { behavior: "allow" };
      },
    });
    const ends: ToolCallEndEvent[] = [];
    session.on("tool-call-end", (event) => ends.push(event));
    const result = await session.send("drop it").result;

    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      kind: "client-tool",
      toolName: "drop_database",
      toolCallId: "call_0",
      input: { database: "production" },
    });
    expect(runs).toEqual(["production"]);
    expect(results.map((entry) => entry.toolReturn)).toEqual(["dropped production (12 tables)"]);
    expect(ends.map((end) => [end.outcome, end.output])).toEqual([["ok", { dropped: "production", tables: 12 }]]);
    expect(result.toolOutputs).toEqual([
      { toolCallId: "call_0", toolName: "drop_database", output: { dropped: "production", tables: 12 } },
    ]);
  });

  it("declined: execute never runs and the model reads the declined text", async () => {
    const { tools, runs } = dropDatabase();
    const { runtime, results } = await runtimeCallingDrop();
    const session = await sessionOn(runtime, { tools, canUseTool: () => ({ behavior: "deny", message: "never production" }) });
    const result = await session.send("drop it").result;

    expect(runs).toEqual([]);
    const declined = deniedText("drop_database", { kind: "denied", reason: "declined", message: "never production" });
    expect(results.map((entry) => [entry.toolReturn, entry.isError])).toEqual([[declined, false]]);
    expect(result.toolOutputs).toEqual([]);
  });

  it("a needsApproval function asks only when it says so, and gets the input and { toolCallId, messages: [] }", async () => {
    const seen: unknown[] = [];
    const { tools, runs } = dropDatabase((input, options) => {
      seen.push({ input, options });
      return input.database === "production";
    });
    const { runtime, results } = await runtimeCallingDrop("scratch");
    const asked: ApprovalRequest[] = [];
    const session = await sessionOn(runtime, {
      tools,
      canUseTool: (request) => {
        asked.push(request);
        return { behavior: "deny", message: "no" };
      },
    });
    await session.send("drop scratch").result;

    expect(seen).toEqual([{ input: { database: "scratch" }, options: { toolCallId: "call_0", messages: [] } }]);
    expect(asked).toEqual([]);
    expect(runs).toEqual(["scratch"]);
    expect(results.map((entry) => entry.toolReturn)).toEqual(["dropped scratch (12 tables)"]);
  });

  it("a throwing needsApproval refuses the call unrun (denied, failed) and the model reads why", async () => {
    const { tools, runs } = dropDatabase(() => {
      throw new Error("policy service down");
    });
    const { runtime, results } = await runtimeCallingDrop();
    const asked: ApprovalRequest[] = [];
    const session = await sessionOn(runtime, {
      tools,
      canUseTool: (request) => {
        asked.push(request);
        return { behavior: "allow" };
      },
    });
    const ends: ToolCallEndEvent[] = [];
    session.on("tool-call-end", (event) => ends.push(event));
    await session.send("drop it").result;

    expect(runs).toEqual([]);
    expect(asked).toEqual([]);
    expect(ends.map((end) => end.detail)).toEqual([
      { kind: "denied", reason: "failed", message: "needsApproval threw: policy service down" },
    ]);
    expect(results.map((entry) => entry.toolReturn)).toEqual([
      "Tool drop_database was not run: its approval could not be checked (needsApproval threw: policy service down).",
    ]);
  });

  it("a session with such a tool and no canUseTool is refused at creation (INVALID_OPTIONS naming the tool)", async () => {
    const { tools } = dropDatabase();
    const { runtime } = await runtimeCallingDrop();
    await expect(sessionOn(runtime, { tools })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("options.canUseTool: is required, because tool drop_database need"),
    });
    // needsApproval: false asks nobody: the same tool makes a session without canUseTool.
    const { tools: unasked } = dropDatabase(false);
    await expect(sessionOn(runtime, { tools: unasked })).resolves.toBeDefined();
  });
});
