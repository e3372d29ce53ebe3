/**
 * mcpTools()'s `approval: "destructive"` against the REAL Letta Code app-server (0.32.18, local
 * backend), the real @modelcontextprotocol/server-filesystem (a child process rooted at a temp
 * directory) and a scripted model: the server's `write_file` (`destructiveHint: true`) asks the
 * session's `canUseTool` (kind client-tool, with the MCP annotations) and writes only when allowed;
 * declined, the file does not exist and the model's next request carries the declined text; its
 * `read_text_file` (`readOnlyHint: true`) runs unasked. A session without `canUseTool` is made (the
 * tools are listed after it), and such a call is denied (`no-approver`): the model reads why, and
 * the server never wrote.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { deniedText } from "../packages/toolrelay/src/calls/index.js";
import {
  createSession,
  type ApprovalRequest,
  type Session,
  type SessionOptions,
  type ToolCallEndEvent,
} from "../packages/toolrelay/src/index.js";
import { mcpTools } from "../packages/toolrelay/src/mcp/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import {
  startScriptedModelServer,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedToolCall,
} from "../test/support/scripted-model-server.js";
import { FILESYSTEM_SERVER } from "./support/mcp-processes.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const sessions: Session[] = [];
const scratch = mkdtempSync(join(tmpdir(), "toolrelay-mcp-approval-peer-"));

beforeAll(async () => {
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await server?.stop();
  await model?.close();
  rmSync(scratch, { recursive: true, force: true });
});

beforeEach(() => model.resetScript());

async function open(options: Partial<SessionOptions>): Promise<{ session: Session; ends: ToolCallEndEvent[] }> {
  const session = await createSession({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-mcp-approval" } },
    conversation: "new",
    ...options,
  } as SessionOptions);
  sessions.push(session);
  const ends: ToolCallEndEvent[] = [];
  session.on("tool-call-end", (event) => ends.push(event));
  return { session, ends };
}

/** The model makes these calls one per response (each after the previous result), then reports every result. */
function callInTurn(calls: ScriptedToolCall[]) {
  model.setScript((request: ModelRequest) => {
    const lastUser = request.messages.map((message) => message.role).lastIndexOf("user");
    const results = request.messages.slice(lastUser + 1).filter((message) => message.role === "tool");
    const next = calls[results.length];
    if (next !== undefined) return { toolCalls: [next] };
    return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
  });
}

/** The tool results the model read after the user message sent at `from`, in order. */
function resultsRead(from: number): string[] {
  return model.requests
    .slice(from)
    .filter((request) => request.lastMessage?.role === "tool")
    .flatMap((request) => request.toolResults.map((result) => result.text));
}

/** A filesystem server root with one file in it. */
function rootWithFile(): { root: string; existing: string; target: string } {
  const root = mkdtempSync(join(scratch, "root-"));
  const existing = join(root, "existing.txt");
  writeFileSync(existing, "EXISTING CONTENTS");
  return { root, existing, target: join(root, "written.txt") };
}

const filesystem = (root: string) =>
  mcpTools({ command: process.execPath, args: [FILESYSTEM_SERVER, root], name: "filesystem", approval: "destructive" });

describe('MCP tools with approval: "destructive" (real app-server, real filesystem server)', () => {
  it("write_file asks canUseTool (kind client-tool, MCP annotations): declined it never writes, allowed it does; read_text_file runs unasked", async () => {
    const { root, existing, target } = rootWithFile();
    const asked: ApprovalRequest[] = [];
    let allow = false;
    const { session, ends } = await open({
      tools: [filesystem(root)],
      canUseTool: (request) => {
        asked.push(request);
        return allow ? { behavior: "allow" } : { behavior: "deny", message: "not in this folder" };
      },
    });
    callInTurn([
      { name: "read_text_file", arguments: { path: existing } },
      { name: "write_file", arguments: { path: target, content: "NEW CONTENTS" } },
    ]);

    let from = model.requests.length;
    const declinedTurn = await session.send("read one file, write another").result;
    const declined = deniedText("write_file", { kind: "denied", reason: "declined", message: "not in this folder" });
    expect(asked.map((request) => request.toolName)).toEqual(["write_file"]);
    expect(asked[0]).toMatchObject({
      kind: "client-tool",
      input: { path: target, content: "NEW CONTENTS" },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    });
    expect(existsSync(target)).toBe(false);
    expect(resultsRead(from)).toEqual(["EXISTING CONTENTS", declined]);
    expect(declinedTurn.text).toBe(`done: ${declined}`);
    expect(ends.map((end) => [end.toolName, end.outcome])).toEqual([
      ["read_text_file", "ok"],
      ["write_file", "denied"],
    ]);

    allow = true;
    from = model.requests.length;
    await session.send("again, allowed this time").result;
    expect(asked.map((request) => request.toolName)).toEqual(["write_file", "write_file"]);
    expect(readFileSync(target, "utf8")).toBe("NEW CONTENTS");
    const [, written] = resultsRead(from);
    expect(written).toContain("Successfully wrote to");
  });

  it("no canUseTool: the session is made; write_file is denied (no-approver), the model reads why and the server never wrote", async () => {
    const { root, target } = rootWithFile();
    const { session, ends } = await open({ tools: [filesystem(root)] });
    callInTurn([{ name: "write_file", arguments: { path: target, content: "NEW CONTENTS" } }]);
    const from = model.requests.length;
    const result = await session.send("write a file").result;

    const refused = deniedText("write_file", { kind: "denied", reason: "no-approver", message: "" });
    expect(refused).toBe("Tool write_file was not run: it needs the user's approval and this application cannot ask for it.");
    expect(resultsRead(from)).toEqual([refused]);
    expect(existsSync(target)).toBe(false);
    expect(ends.map((end) => end.detail)).toEqual([{ kind: "denied", reason: "no-approver", message: "" }]);
    expect(result.stopReason).toBe("end_turn");
  });
});
