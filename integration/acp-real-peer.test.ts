/**
 * The example ACP agent as a separate process on stdio, driven by the real
 * `@agentclientprotocol/sdk` client side playing the editor, with the REAL
 * Letta Code app-server (0.32.18, local backend, its own process) behind it
 * and a scripted OpenAI-compatible model (test/support/scripted-model-server.ts)
 * deciding the tool calls. What the model receives is asserted on the model's
 * own requests.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ClientConnection } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import {
  messageText,
  startScriptedModelServer,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from "../test/support/scripted-model-server.js";
import { REPO_ROOT, spawnExampleAgent, type AgentProcess } from "../test/acp/support/agent-process.js";
import { logShape, normalizeLog } from "../test/acp/support/editor-log.js";
import { choose, TestEditor } from "../test/acp/support/test-editor.js";
import { until } from "../test/support/wait.js";

const FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "acp", "one-turn-real-peer.json");

let workspace: string;
let root: string;
let notes: string;
let slow: string;
let model: ScriptedModelServer;
let server: LettaAppServer;
let agentProcess: AgentProcess;
let editor: TestEditor;
let connection: ClientConnection;

/** A scenario: the model's reply for each step (0 = answering the user, n = after the n-th round of tool results). */
type Step = (results: string[]) => ScriptedReply;
const scenarios = new Map<string, Step[]>();
/** What the user clicks when the editor asks: "Reject" unless a test says otherwise. */
let answer: "allow_once" | "reject_once" = "reject_once";

/** Which scenario a request belongs to, and how many tool rounds it already had. */
function locate(request: ModelRequest): { steps: Step[]; step: number; results: string[] } | undefined {
  for (const [key, steps] of scenarios) {
    const userIndex = request.messages
      .map((message) => message.role === "user" && messageText(message.content).includes(key))
      .lastIndexOf(true);
    if (userIndex < 0 || !request.lastUserText.includes(key)) continue;
    const after = request.messages.slice(userIndex + 1);
    const step = after.filter((message) => message.role === "assistant" && (message.tool_calls?.length ?? 0) > 0).length;
    return { steps, step, results: request.toolResults.map((result) => result.text) };
  }
  return undefined;
}

const hashIn = (text: string | undefined) => /hash="([0-9a-f]{16})"/.exec(text ?? "")?.[1] ?? "no-hash";

beforeAll(async () => {
  workspace = realpathSync(mkdtempSync(path.join(tmpdir(), "toolrelay-acp-peer-")));
  root = path.join(workspace, "project");
  notes = path.join(root, "notes.md");
  slow = path.join(root, "slow.txt");
  mkdirSync(root, { recursive: true });
  mkdirSync(path.join(workspace, "project-evil"));
  mkdirSync(path.join(workspace, "outside"));
  writeFileSync(notes, "saved on disk\n");
  writeFileSync(path.join(workspace, "project-evil", "secret.txt"), "secret\n");
  writeFileSync(path.join(workspace, "outside", "secret.txt"), "secret\n");
  symlinkSync("../outside", path.join(root, "link-out"));

  model = await startScriptedModelServer({
    script: (request) => {
      const found = locate(request);
      if (!found) return { text: "pong" };
      const step = found.steps[Math.min(found.step, found.steps.length - 1)]!;
      return step(found.results);
    },
  });
  server = await startLettaAppServer({ modelUrl: model.url });
  agentProcess = spawnExampleAgent({
    TOOLRELAY_BACKEND_URL: server.url,
    TOOLRELAY_MODEL: model.modelHandle,
    TOOLRELAY_EDITOR_TIMEOUT_MS: "30000",
  });
  editor = new TestEditor({ slowPaths: [slow], permission: (request) => choose(request, answer) });
  connection = editor.connect(agentProcess.stream);
  await connection.agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: editor.capabilities,
    clientInfo: { name: "test-editor", version: "1.0.0" },
  });
}, 90_000);

afterAll(async () => {
  const exit = await agentProcess?.stop();
  connection?.close();
  await server?.stop();
  await model?.close();
  rmSync(workspace, { recursive: true, force: true });
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

/** The tool results the model received for a scenario's last round. */
function resultsSeenByModel(key: string, from: number): string[] {
  const request = model.requests
    .slice(from)
    .filter((candidate) => candidate.lastUserText.includes(key) && candidate.toolResults.length > 0)
    .at(-1);
  return request?.toolResults.map((result) => result.text) ?? [];
}

function statuses(sessionId: string): string[] {
  return editor.updates
    .filter((notification) => notification.sessionId === sessionId)
    .map(({ update }) => update.sessionUpdate + ("status" in update && update.status ? ` ${update.status}` : ""));
}

describe("ACP agent process ↔ editor, real Letta Code app-server", () => {
  it("the runtime reads the unsaved buffer through the editor; the model receives the unsaved text", async () => {
    scenarios.set("read my notes", [
      () => ({ text: "Reading.", toolCalls: [{ name: "read_editor_buffer", arguments: { path: notes } }] }),
      (results) => ({ text: `done: ${results[0]}` }),
    ]);
    const from = model.requests.length;
    const sessionId = await newSession();
    await expect(prompt(sessionId, "read my notes")).resolves.toEqual({ stopReason: "end_turn" });
    const seen = resultsSeenByModel("read my notes", from);
    expect(seen[0]).toContain("unsaved edit: line 1\nline 2\n");
    expect(seen[0]).not.toContain("saved on disk");
    expect(statuses(sessionId)).toEqual(
      expect.arrayContaining(["tool_call pending", "tool_call_update in_progress", "tool_call_update completed"]),
    );
    const text = editor.updates
      .filter((notification) => notification.sessionId === sessionId && notification.update.sessionUpdate === "agent_message_chunk")
      .map(({ update }) => (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? update.content.text : ""))
      .join("");
    expect(text).toContain("done: ");
  });

  it("the runtime writes through the editor with the hash it read, once the user allowed it; the buffer changes, the disk does not", async () => {
    answer = "allow_once";
    scenarios.set("rewrite my notes", [
      () => ({ toolCalls: [{ name: "read_editor_buffer", arguments: { path: notes } }] }),
      (results) => ({
        toolCalls: [
          { name: "write_via_editor", arguments: { path: notes, content: "rewritten by the model\n", expected_hash: hashIn(results[0]) } },
        ],
      }),
      (results) => ({ text: `done: ${results[0]}` }),
    ]);
    const from = model.requests.length;
    const sessionId = await newSession();
    const logFrom = editor.log.length;
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
    expect(resultsSeenByModel("rewrite my notes", from)[0]).toContain("through the editor");
    const turnLog = normalizeLog(editor.logSince(logFrom), { replace: { [workspace]: "/workspace" } });
    const shape = logShape(turnLog);
    expect(shape.filter((line) => !line.includes("agent_message_chunk"))).toEqual([
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
      "agent→editor result",
    ]);
    if (process.env.TOOLRELAY_RECORD_ACP === "1") {
      mkdirSync(path.dirname(FIXTURE), { recursive: true });
      const description =
        "What the editor saw for one prompt turn (read_editor_buffer, then write_via_editor with expected_hash), real Letta Code app-server 0.32.18 with a scripted model. Paths under /workspace; ids replaced by placeholders.";
      writeFileSync(FIXTURE, `${JSON.stringify({ description, shape, messages: turnLog }, null, 2)}\n`);
    } else if (existsSync(FIXTURE)) {
      expect(shape).toEqual((JSON.parse(readFileSync(FIXTURE, "utf8")) as { shape: string[] }).shape);
    }
    expect(editor.buffers.get(notes)).toBe("rewritten by the model\n");
    expect(readFileSync(notes, "utf8")).toBe("saved on disk\n");
    expect(editor.writes.at(-1)).toMatchObject({ path: notes, content: "rewritten by the model\n", sessionId });
  });

  it("a stale write is refused after the user edited the buffer; the model is told to read again", async () => {
    answer = "allow_once";
    let readHash = "";
    scenarios.set("stale write", [
      () => ({ toolCalls: [{ name: "read_editor_buffer", arguments: { path: notes } }] }),
      (results) => {
        readHash = hashIn(results[0]);
        editor.buffers.set(notes, "the user kept typing\n");
        return {
          toolCalls: [{ name: "write_via_editor", arguments: { path: notes, content: "model version\n", expected_hash: readHash } }],
        };
      },
      (results) => ({ text: `done: ${results[0]}` }),
    ]);
    const from = model.requests.length;
    const writesBefore = editor.writes.length;
    const sessionId = await newSession();
    await expect(prompt(sessionId, "stale write")).resolves.toEqual({ stopReason: "end_turn" });
    expect(readHash).toMatch(/^[0-9a-f]{16}$/);
    const seen = resultsSeenByModel("stale write", from)[0];
    expect(seen).toContain("changed since you read it");
    expect(seen).toContain("Read it again with read_editor_buffer");
    expect(editor.buffers.get(notes)).toBe("the user kept typing\n");
    expect(editor.writes.length).toBe(writesBefore);
    expect(statuses(sessionId)).toContain("tool_call_update failed");
  });

  it("paths outside the working roots are refused as invalid input; the editor is never asked", async () => {
    const outside = [`${root}/../project-evil/secret.txt`, `${root}-evil/secret.txt`, "notes.md", `${root}/link-out/secret.txt`];
    scenarios.set("escape the workspace", [
      () => ({
        toolCalls: [
          ...outside.map((target) => ({ name: "read_editor_buffer", arguments: { path: target } })),
          { name: "write_via_editor", arguments: { path: `${root}-evil/secret.txt`, content: "pwned" } },
        ],
      }),
      (results) => ({ text: `done: ${results.length} results` }),
    ]);
    const from = model.requests.length;
    const readsBefore = editor.reads.length;
    const writesBefore = editor.writes.length;
    const sessionId = await newSession();
    await expect(prompt(sessionId, "escape the workspace")).resolves.toEqual({ stopReason: "end_turn" });
    const seen = resultsSeenByModel("escape the workspace", from);
    expect(seen).toHaveLength(5);
    for (const result of seen) expect(result).toMatch(/Error: invalid input for tool (read_editor_buffer|write_via_editor):\n- path: /);
    expect(seen[0]).toContain("outside the session's working roots");
    expect(seen[3]).toContain("symbolic link");
    expect(editor.reads.length).toBe(readsBefore);
    expect(editor.writes.length).toBe(writesBefore);
  });

  it("session/cancel during a slow editor request: the call settles cancelled, the editor's request is cancelled, the prompt ends cancelled", async () => {
    scenarios.set("read the slow file", [
      () => ({ toolCalls: [{ name: "read_editor_buffer", arguments: { path: slow } }] }),
      (results) => ({ text: `done: ${results[0]}` }),
    ]);
    const sessionId = await newSession();
    const pending = prompt(sessionId, "read the slow file");
    const read = await editor.nextSlowRead(30_000);
    await connection.agent.notify("session/cancel", { sessionId });
    await expect(pending).resolves.toEqual({ stopReason: "cancelled" });
    await until(() => read.outcome === "cancelled", "the editor's read cancelled", 10_000);
    const cancel = editor.log.find(
      (entry) =>
        entry.direction === "in" &&
        "method" in entry.message &&
        entry.message.method === "$/cancel_request" &&
        (entry.message.params as { requestId: unknown }).requestId === read.requestId,
    );
    expect(cancel).toBeDefined();
    const last = editor.updates
      .filter((notification) => notification.sessionId === sessionId && notification.update.sessionUpdate === "tool_call_update")
      .at(-1);
    expect(last?.update).toMatchObject({
      status: "failed",
      content: [{ content: { text: expect.stringContaining("Tool call cancelled") } }],
    });
    // The session is usable again: a new prompt in the same ACP session ends normally.
    scenarios.set("after the cancel", [() => ({ text: "ready again" })]);
    await expect(prompt(sessionId, "after the cancel")).resolves.toEqual({ stopReason: "end_turn" });
  });

  it("a write the user rejects in the editor does not run; the model reads the declined text", async () => {
    scenarios.set("overwrite my notes", [
      () => ({ toolCalls: [{ name: "write_via_editor", arguments: { path: notes, content: "unwanted\n" } }] }),
      (results) => ({ text: `done: ${results[0]}` }),
    ]);
    const from = model.requests.length;
    const writesBefore = editor.writes.length;
    const askedBefore = editor.permissionRequests.length;
    const sessionId = await newSession();
    await expect(prompt(sessionId, "overwrite my notes")).resolves.toEqual({ stopReason: "end_turn" });
    expect(editor.permissionRequests.slice(askedBefore)).toEqual([
      expect.objectContaining({
        sessionId,
        toolCall: expect.objectContaining({ title: `Write ${notes} (through the editor)`, kind: "edit" }),
      }),
    ]);
    expect(resultsSeenByModel("overwrite my notes", from)[0]).toBe("The user declined this call of tool write_via_editor; it was not run.");
    expect(editor.writes.length).toBe(writesBefore);
    expect(editor.buffers.get(notes)).toBe("unsaved edit: line 1\nline 2\n");
    expect(statuses(sessionId)).toContain("tool_call_update failed");
  });

  it("a runtime tool's permission request goes to the editor; the user's rejection reaches the model", async () => {
    scenarios.set("clean the build", [
      () => ({ toolCalls: [{ name: "Bash", arguments: { command: "touch cleaned.flag", description: "Clean the build" } }] }),
      (results) => ({ text: `done: ${results[0]}` }),
    ]);
    const from = model.requests.length;
    const before = editor.permissionRequests.length;
    const sessionId = await newSession();
    await expect(prompt(sessionId, "clean the build")).resolves.toEqual({ stopReason: "end_turn" });
    expect(model.requests[from]!.toolNames).toContain("Bash");
    const asked = editor.permissionRequests.slice(before);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      sessionId,
      toolCall: { title: "Bash: touch cleaned.flag", kind: "execute", rawInput: { command: "touch cleaned.flag" } },
    });
    expect(resultsSeenByModel("clean the build", from)[0]).toContain("denied in the editor: the user rejected it");
    expect(existsSync(path.join(root, "cleaned.flag"))).toBe(false);
  });

  it("stdout carries only ACP; the agent logged no errors", () => {
    expect(agentProcess.stderr()).not.toMatch(/error/i);
  });
});
