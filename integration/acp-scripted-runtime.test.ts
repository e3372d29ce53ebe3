/**
 * The example ACP agent as a separate process on stdio, driven by the real
 * `@agentclientprotocol/sdk` client side playing the editor (in-memory
 * buffers, one with unsaved edits), with the scripted runtime (in this
 * process) behind the agent's toolrelay sessions.
 *
 * Set TOOLRELAY_RECORD_ACP=1 to rewrite test/fixtures/acp/one-turn.json (what
 * the editor saw, message by message, for the read-then-write turn).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ClientConnection } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  startScriptedRuntime,
  type ScriptedRuntime,
  type ScriptedToolResult,
  type ScriptedTurn,
} from "../packages/toolrelay/src/testing/index.js";
import { spawnExampleAgent, REPO_ROOT, type AgentProcess } from "../test/acp/support/agent-process.js";
import { logShape, normalizeLog } from "../test/acp/support/editor-log.js";
import { choose, TestEditor } from "../test/acp/support/test-editor.js";
import { until } from "../test/support/wait.js";

const FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "acp", "one-turn.json");

let workspace: string;
let root: string;
let notes: string;
let slow: string;
let runtime: ScriptedRuntime;
let agentProcess: AgentProcess;
let editor: TestEditor;
let connection: ClientConnection;
const scripts = new Map<string, (turn: ScriptedTurn) => Promise<void>>();
/** What the user clicks when the editor asks: "Reject" unless a test says otherwise. */
let answer: "allow_once" | "reject_once" = "reject_once";

const text = (result: ScriptedToolResult) => result.error ?? result.content.map((part) => part.text ?? "").join("");
const hashOf = (result: ScriptedToolResult) => /hash="([0-9a-f]{16})"/.exec(text(result))?.[1];

beforeAll(async () => {
  workspace = realpathSync(mkdtempSync(path.join(tmpdir(), "toolrelay-acp-it-")));
  root = path.join(workspace, "project");
  notes = path.join(root, "notes.md");
  slow = path.join(root, "slow.txt");
  mkdirSync(path.join(root, "src"), { recursive: true });
  mkdirSync(path.join(workspace, "project-evil"));
  mkdirSync(path.join(workspace, "outside"));
  writeFileSync(notes, "saved on disk\n");
  writeFileSync(path.join(workspace, "project-evil", "secret.txt"), "secret\n");
  writeFileSync(path.join(workspace, "outside", "secret.txt"), "secret\n");
  symlinkSync("../outside", path.join(root, "link-out"));

  runtime = await startScriptedRuntime({
    script: async (turn) => {
      const script = scripts.get(turn.userText);
      if (!script) throw new Error(`no script for ${JSON.stringify(turn.userText)}`);
      await script(turn);
    },
  });
  agentProcess = spawnExampleAgent({
    TOOLRELAY_BACKEND_URL: runtime.url,
    TOOLRELAY_MODEL: "scripted/acp",
    TOOLRELAY_EDITOR_TIMEOUT_MS: "20000",
  });
  editor = new TestEditor({ slowPaths: [slow], permission: (request) => choose(request, answer) });
  connection = editor.connect(agentProcess.stream);
  const init: { agentInfo?: unknown } = await connection.agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: editor.capabilities,
    clientInfo: { name: "test-editor", version: "1.0.0" },
  });
  expect(init.agentInfo).toMatchObject({ name: "toolrelay-acp-example" });
}, 60_000);

afterAll(async () => {
  const exit = await agentProcess?.stop();
  connection?.close();
  await runtime?.close();
  rmSync(workspace, { recursive: true, force: true });
  // The agent exits by itself once the editor closes its stdin.
  expect(exit).toEqual({ code: 0, signal: null });
});

beforeEach(() => {
  answer = "reject_once";
  editor.buffers.clear();
  editor.buffers.set(notes, "unsaved edit: line 1\nline 2\n");
});

async function newSession(): Promise<string> {
  return (await connection.agent.request("session/new", { cwd: root, mcpServers: [] })).sessionId;
}

function prompt(sessionId: string, words: string) {
  return connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: words }] });
}

function updatesOf(sessionId: string) {
  return editor.updates.filter((notification) => notification.sessionId === sessionId).map((notification) => notification.update);
}

describe("ACP agent process ↔ editor, scripted runtime", () => {
  it("the runtime reads the unsaved buffer through the editor; the editor sees text and the tool call's lifecycle", async () => {
    let read!: ScriptedToolResult;
    scripts.set("read my notes", async (turn) => {
      await turn.say("Reading your notes. ");
      read = await turn.callTool("read_editor_buffer", { path: notes });
      await turn.say(`First line: ${text(read).split("\n")[1]}`);
    });
    const sessionId = await newSession();
    await expect(prompt(sessionId, "read my notes")).resolves.toEqual({ stopReason: "end_turn" });
    expect(read.isError).toBe(false);
    expect(text(read)).toContain("unsaved edit: line 1\nline 2\n");
    expect(text(read)).not.toContain("saved on disk");
    const updates = updatesOf(sessionId);
    expect(updates.map((update) => update.sessionUpdate + ("status" in update && update.status ? ` ${update.status}` : ""))).toEqual([
      "agent_message_chunk",
      "tool_call pending",
      "tool_call_update in_progress",
      "tool_call_update completed",
      "agent_message_chunk",
    ]);
    expect(updates[1]).toMatchObject({ title: `Read ${notes} (editor buffer)`, kind: "read", locations: [{ path: notes }] });
    expect(updates[4]).toMatchObject({ content: { type: "text", text: "First line: unsaved edit: line 1" } });
  });

  it("the runtime writes through the editor after reading (expected_hash), once the user allowed it: the buffer changes, the disk does not", async () => {
    answer = "allow_once";
    let written!: ScriptedToolResult;
    scripts.set("rewrite my notes", async (turn) => {
      const read = await turn.callTool("read_editor_buffer", { path: notes });
      written = await turn.callTool("write_via_editor", { path: notes, content: "rewritten by the agent\n", expected_hash: hashOf(read)! });
      await turn.say("Rewritten.");
    });
    const sessionId = await newSession();
    const from = editor.log.length;
    const askedBefore = editor.permissionRequests.length;
    await expect(prompt(sessionId, "rewrite my notes")).resolves.toEqual({ stopReason: "end_turn" });
    // The write asked first (the session's default mode, strict: edits are not pre-approved); the read did not.
    expect(editor.permissionRequests.slice(askedBefore).map((request) => request.toolCall)).toEqual([
      expect.objectContaining({
        title: `Write ${notes} (through the editor)`,
        kind: "edit",
        rawInput: expect.objectContaining({ path: notes }),
      }),
    ]);
    expect(written.isError).toBe(false);
    expect(text(written)).toContain("through the editor");
    expect(editor.buffers.get(notes)).toBe("rewritten by the agent\n");
    expect(readFileSync(notes, "utf8")).toBe("saved on disk\n");
    expect(editor.writes.at(-1)).toMatchObject({ path: notes, content: "rewritten by the agent\n", sessionId });

    // What the editor saw for this turn, message by message.
    const turnLog = normalizeLog(editor.logSince(from), { replace: { [workspace]: "/workspace" } });
    const shape = logShape(turnLog);
    expect(shape).toEqual([
      "editor→agent session/prompt (request)",
      "agent→editor session/update tool_call pending",
      "agent→editor session/update tool_call_update in_progress",
      "agent→editor fs/read_text_file (request)",
      "editor→agent result",
      "agent→editor session/update tool_call_update completed",
      "agent→editor session/update tool_call pending",
      "agent→editor session/request_permission (request)",
      "editor→agent result",
      "agent→editor session/update tool_call_update in_progress",
      "agent→editor fs/read_text_file (request)",
      "editor→agent result",
      "agent→editor fs/write_text_file (request)",
      "editor→agent result",
      "agent→editor session/update tool_call_update completed",
      "agent→editor session/update agent_message_chunk",
      "agent→editor result",
    ]);
    if (process.env.TOOLRELAY_RECORD_ACP === "1") {
      mkdirSync(path.dirname(FIXTURE), { recursive: true });
      writeFileSync(
        FIXTURE,
        `${JSON.stringify({ description: "What the editor saw for one prompt turn (read_editor_buffer, then write_via_editor with expected_hash), scripted runtime. Paths under /workspace; ids replaced by placeholders.", shape, messages: turnLog }, null, 2)}\n`,
      );
    } else if (existsSync(FIXTURE)) {
      expect(shape).toEqual((JSON.parse(readFileSync(FIXTURE, "utf8")) as { shape: string[] }).shape);
    }
  });

  it("a stale write is refused: the user edited the buffer after the runtime read it; nothing is written", async () => {
    answer = "allow_once";
    let stale!: ScriptedToolResult;
    scripts.set("stale write", async (turn) => {
      const read = await turn.callTool("read_editor_buffer", { path: notes });
      editor.buffers.set(notes, "the user kept typing\n");
      stale = await turn.callTool("write_via_editor", { path: notes, content: "agent version\n", expected_hash: hashOf(read)! });
      await turn.say(stale.isError ? "Refused." : "Written.");
    });
    const sessionId = await newSession();
    const writesBefore = editor.writes.length;
    await expect(prompt(sessionId, "stale write")).resolves.toEqual({ stopReason: "end_turn" });
    expect(stale.isError).toBe(true);
    expect(text(stale)).toContain("changed since you read it");
    expect(text(stale)).toContain("Read it again with read_editor_buffer");
    expect(editor.buffers.get(notes)).toBe("the user kept typing\n");
    expect(editor.writes.length).toBe(writesBefore);
    const last = updatesOf(sessionId)
      .filter((update) => update.sessionUpdate === "tool_call_update")
      .at(-1);
    expect(last).toMatchObject({
      status: "failed",
      content: [{ content: { text: expect.stringContaining("changed since you read it") } }],
    });
  });

  it("paths outside the working roots are refused as invalid input and never reach the editor", async () => {
    const results: ScriptedToolResult[] = [];
    const outside = [
      `${root}/../project-evil/secret.txt`,
      `${root}-evil/secret.txt`,
      "notes.md",
      `${root}/link-out/secret.txt`,
      `${root}/notes.md\0.txt`,
      "/etc/passwd",
    ];
    scripts.set("escape", async (turn) => {
      for (const target of outside) results.push(await turn.callTool("read_editor_buffer", { path: target }));
      results.push(await turn.callTool("write_via_editor", { path: `${root}-evil/secret.txt`, content: "pwned" }));
    });
    const sessionId = await newSession();
    const readsBefore = editor.reads.length;
    const writesBefore = editor.writes.length;
    await expect(prompt(sessionId, "escape")).resolves.toEqual({ stopReason: "end_turn" });
    expect(results).toHaveLength(7);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/^Error: invalid input for tool (read_editor_buffer|write_via_editor):\n- path: /);
    }
    expect(text(results[0]!)).toContain("outside the session's working roots");
    expect(text(results[3]!)).toContain("symbolic link");
    expect(editor.reads.length).toBe(readsBefore);
    expect(editor.writes.length).toBe(writesBefore);
    expect(updatesOf(sessionId).filter((update) => "status" in update && update.status === "failed")).toHaveLength(7);
  });

  it("session/cancel during a slow editor request: the call settles cancelled, the editor's request is cancelled, the prompt ends cancelled", async () => {
    let afterCancel: ScriptedToolResult | undefined;
    scripts.set("read the slow file", async (turn) => {
      afterCancel = await turn.callTool("read_editor_buffer", { path: slow });
      await turn.say("never said");
    });
    const sessionId = await newSession();
    const callsBefore = runtime.calls.length;
    const pending = prompt(sessionId, "read the slow file");
    const read = await editor.nextSlowRead();
    await connection.agent.notify("session/cancel", { sessionId });
    await expect(pending).resolves.toEqual({ stopReason: "cancelled" });
    // The editor's request was cancelled ($/cancel_request for its id) and its handler saw the abort.
    await until(() => read.outcome === "cancelled", "the editor's read cancelled", 10_000);
    const cancel = editor.log.find(
      (entry) =>
        entry.direction === "in" &&
        "method" in entry.message &&
        entry.message.method === "$/cancel_request" &&
        (entry.message.params as { requestId: unknown }).requestId === read.requestId,
    );
    expect(cancel).toBeDefined();
    // The runtime was answered "cancelled" at once.
    const call = runtime.calls.slice(callsBefore).find((record) => record.toolName === "read_editor_buffer")!;
    expect(call.response).toMatchObject({ error: expect.stringContaining("Tool call cancelled") });
    expect(afterCancel?.isError).toBe(true);
    const updates = updatesOf(sessionId);
    expect(updates.filter((update) => update.sessionUpdate === "tool_call_update").at(-1)).toMatchObject({ status: "failed" });
    expect(updates.some((update) => update.sessionUpdate === "agent_message_chunk")).toBe(false);
  });

  it("a write the user rejects in the editor does not run; the runtime reads the declined text", async () => {
    let rejected!: ScriptedToolResult;
    scripts.set("overwrite my notes", async (turn) => {
      rejected = await turn.callTool("write_via_editor", { path: notes, content: "unwanted\n" });
    });
    const sessionId = await newSession();
    const writesBefore = editor.writes.length;
    const askedBefore = editor.permissionRequests.length;
    await expect(prompt(sessionId, "overwrite my notes")).resolves.toEqual({ stopReason: "end_turn" });
    expect(editor.permissionRequests.length - askedBefore).toBe(1);
    expect(text(rejected)).toBe("The user declined this call of tool write_via_editor; it was not run.");
    expect(editor.writes.length).toBe(writesBefore);
    expect(editor.buffers.get(notes)).toBe("unsaved edit: line 1\nline 2\n");
    expect(
      updatesOf(sessionId)
        .filter((update) => update.sessionUpdate === "tool_call_update")
        .at(-1),
    ).toMatchObject({ status: "failed" });
  });

  it("a runtime tool's permission request goes to the editor; the user's rejection reaches the model", async () => {
    let bash!: ScriptedToolResult;
    scripts.set("clean the build", async (turn) => {
      bash = await turn.callTool("Bash", { command: "rm -rf build" });
    });
    const sessionId = await newSession();
    const before = editor.permissionRequests.length;
    await expect(prompt(sessionId, "clean the build")).resolves.toEqual({ stopReason: "end_turn" });
    const asked = editor.permissionRequests.slice(before);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      sessionId,
      toolCall: { title: "Bash: rm -rf build", kind: "execute", rawInput: { command: "rm -rf build" } },
    });
    expect(bash.isError).toBe(true);
    expect(text(bash)).toContain("denied in the editor: the user rejected it");
  });

  it("stdout carries only ACP; the agent logged no errors", () => {
    expect(agentProcess.stderr()).not.toMatch(/error/i);
  });
});
