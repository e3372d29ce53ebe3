/**
 * startAcpAgent in process: the real ACP SDK on both sides (in-memory streams),
 * the scripted runtime behind the agent's toolrelay sessions.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ClientConnection, PromptResponse } from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startAcpAgent, type AcpAgent, type AcpAgentOptions } from "../../packages/toolrelay/src/acp/index.js";
import {
  startScriptedRuntime,
  type ScriptedRuntime,
  type StartScriptedRuntimeOptions,
} from "../../packages/toolrelay/src/testing/index.js";
import { until } from "../support/wait.js";
import { memoryStreamPair, TestEditor, type TestEditorOptions } from "./support/test-editor.js";

let workspace: string;
let root: string;
const cleanups: Array<() => Promise<void> | void> = [];

beforeEach(() => {
  workspace = realpathSync(mkdtempSync(path.join(tmpdir(), "toolrelay-acp-agent-")));
  root = path.join(workspace, "project");
  mkdirSync(root);
  writeFileSync(path.join(root, "notes.md"), "saved on disk\n");
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  rmSync(workspace, { recursive: true, force: true });
});

interface Harness {
  runtime: ScriptedRuntime;
  agent: AcpAgent;
  editor: TestEditor;
  connection: ClientConnection;
  newSession(cwd?: string): Promise<string>;
  prompt(sessionId: string, text: string): Promise<PromptResponse>;
}

async function harness(
  script: StartScriptedRuntimeOptions["script"],
  options: {
    runtime?: Partial<StartScriptedRuntimeOptions>;
    editor?: TestEditorOptions;
    agent?: Partial<AcpAgentOptions>;
    mode?: "standard";
  } = {},
): Promise<Harness> {
  const runtime = await startScriptedRuntime({ script, ...options.runtime });
  cleanups.push(() => runtime.close());
  const [agentSide, editorSide] = memoryStreamPair();
  const agent = startAcpAgent(agentSide, {
    session: () => ({
      backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
      agent: { create: { model: "scripted/test" } },
      ...(options.mode ? { mode: options.mode } : {}),
    }),
    ...options.agent,
  });
  cleanups.push(() => agent.close());
  const editor = new TestEditor(options.editor);
  const connection = editor.connect(editorSide);
  cleanups.push(() => connection.close());
  await connection.agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: editor.capabilities,
    clientInfo: { name: "test-editor", version: "1" },
  });
  return {
    runtime,
    agent,
    editor,
    connection,
    async newSession(cwd = root) {
      return (await connection.agent.request("session/new", { cwd, mcpServers: [] })).sessionId;
    },
    prompt: (sessionId, text) => connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }),
  };
}

const resultText = (result: { content: Array<{ text?: string }>; error?: string }) =>
  result.error ?? result.content.map((part) => part.text ?? "").join("");

describe("startAcpAgent", () => {
  it("initialize advertises the agent's capabilities; requests before initialize are refused", async () => {
    const runtime = await startScriptedRuntime({ script: () => undefined });
    cleanups.push(() => runtime.close());
    const [agentSide, editorSide] = memoryStreamPair();
    const agent = startAcpAgent(agentSide, {
      session: () => ({ backend: { kind: "local", url: runtime.url }, agent: { create: { model: "m" } } }),
    });
    cleanups.push(() => agent.close());
    const connection = new TestEditor().connect(editorSide);
    cleanups.push(() => connection.close());
    await expect(connection.agent.request("session/new", { cwd: root, mcpServers: [] })).rejects.toMatchObject({ code: -32600 });
    const response = await connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    expect(response).toMatchObject({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { embeddedContext: true },
        sessionCapabilities: { additionalDirectories: {}, close: {} },
      },
      agentInfo: { name: "toolrelay-acp" },
    });
  });

  it("registers the editor tools the editor advertised, with the roots in their descriptions", async () => {
    const both = await harness(() => undefined);
    await both.newSession();
    expect(both.runtime.registrations().map((tool) => tool.name)).toEqual(["read_editor_buffer", "write_via_editor"]);
    expect(both.runtime.registrations()[0]!.description).toContain(root);
  });

  it("registers no editor tool for an editor without fs capabilities", async () => {
    const none = await harness(() => undefined, { editor: { fs: { readTextFile: false, writeTextFile: false } } });
    await none.newSession();
    expect(none.runtime.registrations()).toEqual([]);
  });

  it("a prompt streams text and the editor tool call's lifecycle; the runtime reads the unsaved buffer", async () => {
    let seen = "";
    const h = await harness(async (turn) => {
      await turn.say("Reading. ");
      const result = await turn.callTool("read_editor_buffer", { path: path.join(root, "notes.md") });
      seen = resultText(result);
      await turn.say("Done.");
    });
    h.editor.buffers.set(path.join(root, "notes.md"), "unsaved edit\n");
    const sessionId = await h.newSession();
    const response = await h.prompt(sessionId, "read my notes");
    expect(response).toEqual({ stopReason: "end_turn" });
    expect(seen).toContain("unsaved edit\n");
    const kinds = h.editor.updates.map(
      (n) => n.update.sessionUpdate + ("status" in n.update && n.update.status ? `:${n.update.status}` : ""),
    );
    expect(kinds).toEqual([
      "agent_message_chunk",
      "tool_call:pending",
      "tool_call_update:in_progress",
      "tool_call_update:completed",
      "agent_message_chunk",
    ]);
    expect(h.editor.updates.every((n) => n.sessionId === sessionId)).toBe(true);
  });

  it("additional directories are working roots too; other paths are invalid input and never reach the editor", async () => {
    const extra = path.join(workspace, "extra");
    mkdirSync(extra);
    writeFileSync(path.join(extra, "x.txt"), "extra\n");
    const results: string[] = [];
    const h = await harness(async (turn) => {
      for (const target of [path.join(extra, "x.txt"), path.join(workspace, "project-evil", "x"), "relative.txt"]) {
        results.push(resultText(await turn.callTool("read_editor_buffer", { path: target })));
      }
    });
    const sessionId = (await h.connection.agent.request("session/new", { cwd: root, additionalDirectories: [extra], mcpServers: [] }))
      .sessionId;
    await h.prompt(sessionId, "go");
    expect(results[0]).toContain("extra\n");
    expect(results[1]).toContain("Error: invalid input for tool read_editor_buffer");
    expect(results[1]).toContain("outside the session's working roots");
    expect(results[2]).toContain("must be absolute");
    expect(h.editor.reads.map((read) => read.path)).toEqual([path.join(extra, "x.txt")]);
  });

  it("session/cancel during a slow editor request: the call settles cancelled, the editor request is cancelled, the prompt ends cancelled", async () => {
    const slow = path.join(root, "slow.txt");
    const h = await harness(
      async (turn) => {
        await turn.callTool("read_editor_buffer", { path: slow });
        await turn.say("should not be said");
      },
      { editor: { slowPaths: [slow] } },
    );
    const sessionId = await h.newSession();
    const prompt = h.prompt(sessionId, "read the slow file");
    const read = await h.editor.nextSlowRead();
    await h.connection.agent.notify("session/cancel", { sessionId });
    await expect(prompt).resolves.toEqual({ stopReason: "cancelled" });
    await until(() => read.outcome === "cancelled", "the editor's read cancelled", 5_000);
    const cancel = h.editor.log.find(
      (entry) => entry.direction === "in" && "method" in entry.message && entry.message.method === "$/cancel_request",
    );
    expect(cancel?.message).toMatchObject({ params: { requestId: read.requestId } });
    const call = await until(() => h.runtime.calls.find((record) => record.status === "answered"), "the runtime's call answered", 5_000);
    expect(call.response).toMatchObject({ error: expect.stringContaining("Tool call cancelled") });
    const last = h.editor.updates.filter((n) => n.update.sessionUpdate === "tool_call_update").at(-1)!;
    expect(last.update).toMatchObject({ status: "failed" });
    expect(h.editor.updates.some((n) => n.update.sessionUpdate === "agent_message_chunk")).toBe(false);
  });

  it("permission requests for runtime tools go to the editor; reject denies, allow-always is remembered", async () => {
    const outcomes: string[] = [];
    const h = await harness(
      async (turn) => {
        for (let i = 0; i < 3; i++) outcomes.push(resultText(await turn.callTool("Bash", { command: "ls" })));
      },
      {
        mode: "standard",
        editor: {
          permission: (request) => {
            const count = h.editor.permissionRequests.length;
            const kind = count === 1 ? "reject_once" : "allow_always";
            return { outcome: { outcome: "selected", optionId: request.options.find((option) => option.kind === kind)!.optionId } };
          },
        },
      },
    );
    const sessionId = await h.newSession();
    await h.prompt(sessionId, "list files");
    expect(h.editor.permissionRequests).toHaveLength(2);
    expect(h.editor.permissionRequests[0]).toMatchObject({
      sessionId,
      toolCall: { title: "Bash: ls", kind: "execute", status: "pending", rawInput: { command: "ls" } },
      options: [{ kind: "allow_once" }, { kind: "allow_always" }, { kind: "reject_once" }],
    });
    expect(outcomes[0]).toContain("denied in the editor: the user rejected it");
    // Allowed (twice: once by the user, once remembered): the scripted runtime has no Bash, so it is not found.
    expect(outcomes[1]).not.toContain("denied");
    expect(outcomes[2]).not.toContain("denied");
  });

  it("a second prompt while one runs is refused; a closed session is gone", async () => {
    const slow = path.join(root, "slow.txt");
    const h = await harness(async (turn) => void (await turn.callTool("read_editor_buffer", { path: slow })), {
      editor: { slowPaths: [slow] },
    });
    const sessionId = await h.newSession();
    const first = h.prompt(sessionId, "one");
    await h.editor.nextSlowRead();
    await expect(h.prompt(sessionId, "two")).rejects.toMatchObject({ code: -32600 });
    await h.connection.agent.request("session/close", { sessionId });
    await expect(first).resolves.toEqual({ stopReason: "cancelled" });
    expect(h.agent.sessionIds()).toEqual([]);
    await expect(h.prompt(sessionId, "three")).rejects.toMatchObject({ code: -32002 });
  });

  it("a turn that ends in an error rejects the prompt with the runtime's message", async () => {
    const h = await harness(async (turn) => {
      await turn.say("about to fail");
      turn.fail("model exploded"); // an error turn of the runtime (a throw would be a script error)
    });
    const sessionId = await h.newSession();
    await expect(h.prompt(sessionId, "fail")).rejects.toMatchObject({ code: -32603, message: expect.stringContaining("model exploded") });
  });

  it("a session that cannot start answers session/new with an error", async () => {
    const h = await harness(() => undefined, {
      agent: { session: () => ({ backend: { kind: "local", url: "ws://127.0.0.1:1/ws" }, agent: { create: { model: "m" } } }) },
    });
    await expect(h.newSession()).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining("could not start a toolrelay session"),
    });
  });

  it("closing the connection closes every session", async () => {
    const h = await harness(() => undefined);
    await h.newSession();
    await h.newSession();
    expect(h.runtime.connections).toBe(2);
    await h.editor.closeOutput();
    await h.agent.closed;
    expect(h.agent.sessionIds()).toEqual([]);
    await until(() => h.runtime.connections === 0, "runtime sockets closed", 5_000);
  });
});
