/**
 * An AI SDK tool (`tool({ needsApproval: true })` from the real `ai` package, through
 * fromAiSdkTools) against the REAL Letta Code app-server (0.32.18, local backend) and a scripted
 * model: the call asks the session's `canUseTool` (kind client-tool) and runs only when allowed —
 * then the app's `toolOutputs` hold execute's real value while the model reads what the tool's
 * `toModelOutput` maps it to; declined, execute is never called and the model's next request
 * carries the declined text as the call's result. Without `canUseTool` the session is refused.
 */
import { tool } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { deniedText } from "../packages/toolrelay/src/calls/index.js";
import { createSession, fromAiSdkTools, type ApprovalRequest, type Session, type SessionOptions } from "../packages/toolrelay/src/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ModelRequest, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const sessions: Session[] = [];

beforeAll(async () => {
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await server?.stop();
  await model?.close();
});

beforeEach(() => {
  model.resetScript();
  // The model drops the database named in the user's message, then reports what it read back.
  model.setScript((request: ModelRequest) => {
    if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
    return { toolCalls: [{ name: "drop_database", arguments: { database: request.lastUserText.split(" ").pop()! } }] };
  });
});

/** The AI SDK's "delete the database" tool, and every database its execute dropped. */
function dropDatabase() {
  const dropped: string[] = [];
  const tools = fromAiSdkTools({
    drop_database: tool({
      description: "Drops a database and every table in it",
      inputSchema: z.object({ database: z.string() }),
      needsApproval: true,
      execute: async ({ database }) => {
        dropped.push(database);
        return { dropped: database, tables: 12 };
      },
      toModelOutput: ({ output }) => ({ type: "text", value: `dropped ${output.dropped} (${output.tables} tables)` }),
    }),
  });
  return { tools, dropped };
}

async function open(options: Partial<SessionOptions>): Promise<Session> {
  const session = await createSession({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-ai-sdk-approval" } },
    conversation: "new",
    ...options,
  } as SessionOptions);
  sessions.push(session);
  return session;
}

function followUp(from: number): ModelRequest {
  const found = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool");
  if (found === undefined) throw new Error("the model got no tool result");
  return found;
}

describe("an AI SDK needsApproval tool (real app-server)", () => {
  it("asks canUseTool (kind client-tool) and runs only when allowed: the app reads the real value, the model the mapped text", async () => {
    const { tools, dropped } = dropDatabase();
    const asked: ApprovalRequest[] = [];
    const session = await open({
      tools,
      canUseTool: (request) => {
        asked.push(request);
        return { behavior: "allow" };
      },
    });
    const from = model.requests.length;
    const result = await session.send("drop the database scratch").result;

    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ kind: "client-tool", toolName: "drop_database", input: { database: "scratch" }, suggestions: [] });
    expect(asked[0]!.requestId).toMatch(/^external-tool-/);
    expect(dropped).toEqual(["scratch"]);
    expect(followUp(from).toolResults.map((entry) => entry.text)).toEqual(["dropped scratch (12 tables)"]);
    expect(result.toolOutputs).toEqual([
      { toolCallId: asked[0]!.toolCallId, toolName: "drop_database", output: { dropped: "scratch", tables: 12 } },
    ]);
    expect(result.stopReason).toBe("end_turn");
  });

  it("declined: execute is never called and the model's next request carries the declined text", async () => {
    const { tools, dropped } = dropDatabase();
    const session = await open({ tools, canUseTool: () => ({ behavior: "deny", message: "not production" }) });
    const from = model.requests.length;
    const result = await session.send("drop the database production").result;

    const declined = deniedText("drop_database", { kind: "denied", reason: "declined", message: "not production" });
    expect(declined).toBe("The user declined this call of tool drop_database; it was not run. The user said: not production");
    expect(dropped).toEqual([]);
    expect(followUp(from).toolResults.map((entry) => entry.text)).toEqual([declined]);
    expect(result.text).toBe(`done: ${declined}`);
    expect(result.toolOutputs).toEqual([]);
  });

  it("without canUseTool the session is refused (INVALID_OPTIONS naming the tool); nothing reaches the runtime", async () => {
    const { tools } = dropDatabase();
    const from = model.requests.length;
    await expect(open({ tools })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("options.canUseTool: is required, because tool drop_database need"),
    });
    expect(model.requests.length).toBe(from);
  });
});
