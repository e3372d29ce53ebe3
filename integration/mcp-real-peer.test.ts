/**
 * MCP servers as client tools against the REAL Letta Code app-server (0.32.18, local backend)
 * with a scripted model: the real @modelcontextprotocol/server-filesystem, started by the session
 * as a child process rooted at a temp directory, reads and writes files for the agent; the
 * model's requests show the server's descriptions; a destructive MCP tool that times out gets
 * the "inspect state" text; list_changed re-registers; a crash leaves the session up; close()
 * leaves no MCP child running.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createSession, type Session, type SessionOptions, type ToolrelayError } from "../packages/toolrelay/src/index.js";
import { mcpTools } from "../packages/toolrelay/src/mcp/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import {
  startScriptedModelServer,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedToolCall,
} from "../test/support/scripted-model-server.js";
import { FILESYSTEM_SERVER, processesWith, TEST_MCP_SERVER } from "./support/mcp-processes.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const sessions: Session[] = [];
const scratch = mkdtempSync(join(tmpdir(), "toolrelay-mcp-peer-"));

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

async function open(options: Partial<SessionOptions>): Promise<Session> {
  const session = await createSession({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-mcp" } },
    ...options,
  });
  sessions.push(session);
  return session;
}

/** The model makes these calls one per response (each after the previous result), then reports every result. */
function callInTurn(calls: ScriptedToolCall[]) {
  return (request: ModelRequest) => {
    const lastUser = request.messages.map((message) => message.role).lastIndexOf("user");
    const results = request.messages.slice(lastUser + 1).filter((message) => message.role === "tool");
    const next = calls[results.length];
    if (next) return { toolCalls: [next] };
    return { text: `done: ${request.toolResults.map((result) => result.text).join(" | ")}` };
  };
}

function toolResultsSince(from: number): string[] {
  return model.requests
    .slice(from)
    .flatMap((request) => (request.lastMessage?.role === "tool" ? request.toolResults.map((result) => result.text) : []));
}

describe("MCP servers through toolrelay against the real app-server", () => {
  it("the agent reads and writes files through the real server-filesystem; the model sees the server's descriptions and schemas", async () => {
    const root = mkdtempSync(join(scratch, "fs-root-"));
    writeFileSync(join(root, "hello.txt"), "hello from disk\n");
    // What the server itself says about its tools, straight from an MCP client of our own.
    const direct = new Client({ name: "direct", version: "1" });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [FILESYSTEM_SERVER, root], stderr: "ignore" }));
    const listed = (await direct.listTools()).tools;
    await direct.close();

    const session = await open({ tools: [mcpTools({ command: process.execPath, args: [FILESYSTEM_SERVER, root], name: "filesystem" })] });
    expect(processesWith(FILESYSTEM_SERVER, root)).toHaveLength(1);
    model.setScript(
      callInTurn([
        { name: "read_text_file", arguments: { path: join(root, "hello.txt") } },
        { name: "write_file", arguments: { path: join(root, "notes.txt"), content: "written by the agent" } },
        { name: "list_directory", arguments: { path: root } },
      ]),
    );
    const from = model.requests.length;
    const result = await session.send("Read hello.txt, write notes.txt, list the folder.").result;
    expect(result.stopReason).toBe("end_turn");
    expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("written by the agent");
    const results = toolResultsSince(from);
    expect(results[0]).toBe("hello from disk\n");
    expect(results[1]).toBe(`Successfully wrote to ${join(root, "notes.txt")}`);
    expect(results[2]).toContain("[FILE] hello.txt");
    expect(results[2]).toContain("[FILE] notes.txt");

    const offered = new Map(model.requests[from]!.tools.map((tool) => [tool.function.name, tool.function]));
    expect(listed.length).toBeGreaterThan(10);
    for (const tool of listed) {
      const seen = offered.get(tool.name);
      expect(seen, tool.name).toBeDefined();
      expect(seen!.description).toBe(tool.description);
      const { $schema: _ignored, ...schema } = tool.inputSchema as Record<string, unknown>;
      expect(seen!.parameters, tool.name).toEqual(schema);
    }
    await session.close();
    expect(processesWith(FILESYSTEM_SERVER, root)).toEqual([]);
  });

  it("a destructive, non-idempotent MCP tool that times out: the model is told to inspect state; the server got MCP's cancellation", async () => {
    const eventLog = join(scratch, "slow-delete.log");
    writeFileSync(eventLog, "");
    const session = await open({
      tools: [
        mcpTools({ command: process.execPath, args: [TEST_MCP_SERVER], env: { EVENT_LOG: eventLog }, name: "test", callTimeoutMs: 800 }),
      ],
    });
    model.setScript(callInTurn([{ name: "slow_delete", arguments: { path: "/data/old" } }]));
    const outcomes: string[] = [];
    session.on("tool-call-end", (event) => outcomes.push(event.outcome));
    const from = model.requests.length;
    await session.send("delete /data/old").result;
    expect(outcomes).toEqual(["timeout"]);
    expect(toolResultsSince(from)).toEqual([
      "Error: tool slow_delete timed out after 800 ms. It may have applied its effects: inspect state before retrying.",
    ]);
    await vi.waitFor(() => expect(readFileSync(eventLog, "utf8")).toContain("cancelled slow_delete"));
  });

  it("follows notifications/tools/list_changed: the runtime offers the new tool on the next turn and it runs", async () => {
    const session = await open({ tools: [mcpTools({ command: process.execPath, args: [TEST_MCP_SERVER], name: "test" })] });
    const changes: string[][] = [];
    session.on("tools-change", (event) => changes.push(event.names));
    model.setScript(callInTurn([{ name: "add_tool", arguments: {} }]));
    await session.send("add a tool").result;
    await vi.waitFor(() => expect(changes).toHaveLength(1));
    expect(changes[0]).toContain("added_1");
    model.setScript(callInTurn([{ name: "added_1", arguments: {} }]));
    const from = model.requests.length;
    const result = await session.send("use the new tool").result;
    expect(model.requests[from]!.toolNames).toContain("added_1");
    expect(result.text).toContain("added_1 ran");
  });

  it("a crashed MCP server: its tools answer a clear error, the session stays up, close() leaves nothing running", async () => {
    const eventLog = join(scratch, "crash.log");
    writeFileSync(eventLog, "");
    const session = await open({
      tools: [
        mcpTools({ command: process.execPath, args: [TEST_MCP_SERVER, "crash-suite"], env: { EVENT_LOG: eventLog }, name: "crashy" }),
      ],
    });
    const errors: ToolrelayError[] = [];
    session.on("error", (error) => errors.push(error));
    expect(processesWith(TEST_MCP_SERVER, "crash-suite")).toHaveLength(1);
    model.setScript(
      callInTurn([
        { name: "crash", arguments: {} },
        { name: "echo", arguments: { text: "still there?" } },
      ]),
    );
    const from = model.requests.length;
    const result = await session.send("crash it").result;
    expect(result.stopReason).toBe("end_turn");
    const results = toolResultsSince(from);
    expect(results[0]).toContain('MCP server "crashy" exited with code 3');
    expect(results[1]).toBe('Error: tool echo failed: MCP server "crashy" exited with code 3; its tools cannot be called in this session.');
    expect(errors.map((error) => error.code)).toEqual(["TOOL_SOURCE_FAILED"]);
    model.setScript(() => ({ text: "pong" }));
    expect((await session.send("are you there?").result).text).toContain("pong");
    await session.close();
    expect(processesWith(TEST_MCP_SERVER, "crash-suite")).toEqual([]);
  });

  it("close() ends every MCP child of the session (checked by PID), while another session's child keeps running", async () => {
    const first = await open({ tools: [mcpTools({ command: process.execPath, args: [TEST_MCP_SERVER, "close-first"], name: "a" })] });
    const second = await open({ tools: [mcpTools({ command: process.execPath, args: [TEST_MCP_SERVER, "close-second"], name: "b" })] });
    const [firstPid] = processesWith(TEST_MCP_SERVER, "close-first");
    expect(firstPid).toBeGreaterThan(0);
    expect(processesWith(TEST_MCP_SERVER, "close-second")).toHaveLength(1);
    await first.close();
    expect(processesWith(TEST_MCP_SERVER, "close-first")).toEqual([]);
    expect(processesWith(TEST_MCP_SERVER, "close-second")).toHaveLength(1);
    await second.close();
    expect(processesWith(TEST_MCP_SERVER, "close-second")).toEqual([]);
  });

  it("a session whose MCP server cannot start fails to start with TOOL_SOURCE_FAILED and starts nothing else", async () => {
    await expect(
      open({ tools: [mcpTools({ command: process.execPath, args: ["-e", "process.exit(9)"], name: "dead" })] }),
    ).rejects.toMatchObject({
      code: "TOOL_SOURCE_FAILED",
      message: expect.stringContaining('MCP server "dead" did not start'),
    });
  });
});
