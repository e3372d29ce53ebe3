/**
 * The example ACP agent as a separate process on an SDK-managed CLOUD SANDBOX: editor (the real
 * ACP client, here) ↔ agent process ↔ reference relay (a process) ↔ the sandbox the relay starts
 * (the REAL Letta Code listener in its own directory and namespaces) ↔ the directive model (a
 * process). Built-in tools run in the sandbox; `read_editor_buffer` / `write_via_editor` run in
 * the agent process and reach the editor over ACP; a write with a stale hash is refused.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ClientConnection } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bufferHash } from "../packages/toolrelay/src/acp/editor-buffer.js";
import { spawnExampleAgent, type AgentProcess } from "../test/acp/support/agent-process.js";
import { TestEditor } from "../test/acp/support/test-editor.js";
import { SANDBOX_RELAY_KEY, call, startSandboxStack, type SandboxStack } from "./support/sandbox-stack.js";

let workspace: string;
let root: string;
let notes: string;
let stack: SandboxStack;
let agentProcess: AgentProcess;
let editor: TestEditor;
let connection: ClientConnection;
let sessionId: string;

const UNSAVED = "unsaved edit, only in the editor\n";

beforeAll(async () => {
  workspace = realpathSync(mkdtempSync(path.join(tmpdir(), "toolrelay-acp-sandbox-")));
  root = path.join(workspace, "project");
  notes = path.join(root, "notes.md");
  mkdirSync(root, { recursive: true });
  writeFileSync(notes, "saved on disk\n");
  stack = await startSandboxStack();
  agentProcess = spawnExampleAgent({
    TOOLRELAY_CLOUD_SANDBOX: "1",
    TOOLRELAY_SANDBOX_TERMINATE_ON_CLOSE: "1",
    TOOLRELAY_CLOUD_BASE_URL: stack.relayUrl,
    LETTA_API_KEY: SANDBOX_RELAY_KEY,
    TOOLRELAY_MODEL: stack.modelHandle,
  });
  editor = new TestEditor();
  connection = editor.connect(agentProcess.stream);
  await connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: editor.capabilities });
  editor.buffers.set(notes, UNSAVED);
  sessionId = (await connection.agent.request("session/new", { cwd: root, mcpServers: [] })).sessionId;
}, 120_000);

afterAll(async () => {
  await agentProcess?.stop();
  connection?.close();
  await stack?.stop();
  rmSync(workspace, { recursive: true, force: true });
}, 60_000);

async function prompt(lines: string[]) {
  const from = editor.updates.length;
  const response = await connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: lines.join("\n") }] });
  const text = editor.updates
    .slice(from)
    .map(({ update }) => (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? update.content.text : ""))
    .join("");
  return { response, text };
}

describe("ACP agent on a managed sandbox", () => {
  it("built-ins run in the sandbox, the editor tools through the editor, and the hash-guarded write holds", async () => {
    const [sandbox] = await stack.sandboxes();
    expect(sandbox).toBeDefined();
    const permissionsBefore = editor.permissionRequests.length;
    const { response, text } = await prompt([
      call("read_editor_buffer", { path: notes }),
      call("Bash", { command: `pwd; cat ${notes} 2>&1; echo from-the-sandbox > sandbox-made.txt`, description: "look at the project" }),
      call("write_via_editor", { path: notes, content: "written through the editor\n", expected_hash: bufferHash(UNSAVED) }),
    ]);
    expect(response).toEqual({ stopReason: "end_turn" });
    // read_editor_buffer: the editor's unsaved text, not the disk's.
    expect(text).toContain(UNSAVED);
    expect(text).toContain(`hash="${bufferHash(UNSAVED)}"`);
    // Bash: in the sandbox's workspace, where the editor's project does not exist.
    expect(text).toContain(sandbox!.workspace);
    expect(text).toContain(`cat: ${notes}: No such file or directory`);
    expect(readFileSync(path.join(sandbox!.workspace, "sandbox-made.txt"), "utf8")).toBe("from-the-sandbox\n");
    expect(existsSync(path.join(root, "sandbox-made.txt"))).toBe(false);
    // The editor was asked before the runtime's Bash ran and before the write (the session's default
    // mode, strict); never for the read (the runtime's own question about a client tool is the SDK's).
    expect(editor.permissionRequests.slice(permissionsBefore).map((request) => request.toolCall)).toEqual([
      expect.objectContaining({ kind: "execute", title: expect.stringMatching(/^Bash: pwd; cat /) }),
      expect.objectContaining({ kind: "edit", title: `Write ${notes} (through the editor)` }),
    ]);
    // write_via_editor: through the editor, with its hash; the disk is untouched.
    expect(text).toContain("through the editor");
    expect(editor.buffers.get(notes)).toBe("written through the editor\n");
    expect(readFileSync(notes, "utf8")).toBe("saved on disk\n");
  }, 90_000);

  it("a write with a stale hash is refused and the buffer is left alone", async () => {
    const writesBefore = editor.writes.length;
    const current = editor.buffers.get(notes)!;
    const { response, text } = await prompt([
      call("write_via_editor", { path: notes, content: "stale\n", expected_hash: bufferHash(UNSAVED) }),
    ]);
    expect(response).toEqual({ stopReason: "end_turn" });
    expect(text).toContain("changed since you read it");
    expect(editor.buffers.get(notes)).toBe(current);
    expect(editor.writes.length).toBe(writesBefore);
  }, 60_000);

  it("the agent closing its session terminates the sandbox (TOOLRELAY_SANDBOX_TERMINATE_ON_CLOSE=1)", async () => {
    expect(await stack.sandboxes()).toHaveLength(1);
    await expect(agentProcess.stop()).resolves.toEqual({ code: 0, signal: null });
    await expect.poll(async () => (await stack.sandboxes()).length, { timeout: 10_000 }).toBe(0);
  }, 30_000);
});
