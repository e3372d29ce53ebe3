/**
 * The example ACP agent as a separate process, on the CLOUD backend: agent
 * process ↔ reference status relay (a process) ↔ the REAL Letta Code listener
 * (a process) ↔ the directive model (a process). The editor tools run in the
 * agent process and reach the editor over ACP, while the runtime runs behind
 * the relay — the case that breaks in letta-acp#25.
 *
 * The directive model calls the tools named in the prompt (`CALL <tool> <json>`,
 * one per line, in order), so the hashes are computed here from the buffers.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ClientConnection } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { bufferHash } from "../packages/toolrelay/src/acp/editor-buffer.js";
import { spawnExampleAgent, type AgentProcess } from "../test/acp/support/agent-process.js";
import { TestEditor } from "../test/acp/support/test-editor.js";
import { RELAY_API_KEY, startCloudStack, type CloudStack } from "./support/cloud-stack.js";

let workspace: string;
let root: string;
let notes: string;
let stack: CloudStack;
let agentProcess: AgentProcess;
let editor: TestEditor;
let connection: ClientConnection;

const UNSAVED = "unsaved edit over the relay\n";

beforeAll(async () => {
  workspace = realpathSync(mkdtempSync(path.join(tmpdir(), "toolrelay-acp-cloud-")));
  root = path.join(workspace, "project");
  notes = path.join(root, "notes.md");
  mkdirSync(root, { recursive: true });
  writeFileSync(notes, "saved on disk\n");
  stack = await startCloudStack({ listenerMode: "paired", envName: "toolrelay-acp-cloud" });
  agentProcess = spawnExampleAgent({
    TOOLRELAY_CLOUD_ENVIRONMENT: await stack.connectionId(),
    TOOLRELAY_CLOUD_BASE_URL: stack.relayUrl,
    LETTA_API_KEY: RELAY_API_KEY,
    TOOLRELAY_MODEL: stack.modelHandle,
  });
  editor = new TestEditor();
  connection = editor.connect(agentProcess.stream);
  await connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: editor.capabilities });
}, 120_000);

afterAll(async () => {
  const exit = await agentProcess?.stop();
  connection?.close();
  await stack?.stop();
  rmSync(workspace, { recursive: true, force: true });
  expect(exit).toEqual({ code: 0, signal: null });
});

beforeEach(() => {
  editor.buffers.clear();
  editor.buffers.set(notes, UNSAVED);
});

const call = (tool: string, args: Record<string, unknown>) => `CALL ${tool} ${JSON.stringify(args)}`;

async function run(lines: string[]) {
  const sessionId = (await connection.agent.request("session/new", { cwd: root, mcpServers: [] })).sessionId;
  const response = await connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: lines.join("\n") }] });
  const text = editor.updates
    .filter((notification) => notification.sessionId === sessionId)
    .map(({ update }) => (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? update.content.text : ""))
    .join("");
  return { sessionId, response, text };
}

describe("ACP agent process ↔ editor, cloud backend through the relay and the real listener", () => {
  it("reads the unsaved buffer and writes through the editor with its hash, once the user allowed it; the model sees both results", async () => {
    const askedBefore = editor.permissionRequests.length;
    const { response, text } = await run([
      call("read_editor_buffer", { path: notes }),
      call("write_via_editor", { path: notes, content: "written over the relay\n", expected_hash: bufferHash(UNSAVED) }),
    ]);
    expect(response).toEqual({ stopReason: "end_turn" });
    expect(text).toContain(UNSAVED);
    expect(text).toContain(`hash="${bufferHash(UNSAVED)}"`);
    expect(text).toContain("through the editor");
    expect(editor.buffers.get(notes)).toBe("written over the relay\n");
    expect(readFileSync(notes, "utf8")).toBe("saved on disk\n");
    // The write asked the editor first (the test editor answers "Allow once"); the read did not.
    expect(editor.permissionRequests.slice(askedBefore).map((request) => request.toolCall.title)).toEqual([
      `Write ${notes} (through the editor)`,
    ]);
  }, 60_000);

  it("refuses a stale write and a path outside the roots", async () => {
    const writesBefore = editor.writes.length;
    const { response, text } = await run([
      call("write_via_editor", { path: notes, content: "stale\n", expected_hash: bufferHash("what the model read long ago\n") }),
      call("read_editor_buffer", { path: `${root}/../outside.txt` }),
    ]);
    expect(response).toEqual({ stopReason: "end_turn" });
    expect(text).toContain("changed since you read it");
    expect(text).toContain("Error: invalid input for tool read_editor_buffer");
    expect(text).toContain("outside the session's working roots");
    expect(editor.buffers.get(notes)).toBe(UNSAVED);
    expect(editor.writes.length).toBe(writesBefore);
  }, 60_000);
});
