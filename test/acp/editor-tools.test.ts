/**
 * The editor tools against a real ACP client (the SDK's client side playing
 * the editor, in memory), run through toolrelay's own preflight and execution.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { agent as acpAgent, type AgentConnection, type ClientConnection } from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bufferHash } from "../../packages/toolrelay/src/acp/editor-buffer.js";
import { editorChannelFor } from "../../packages/toolrelay/src/acp/editor-capabilities.js";
import { createEditorTools } from "../../packages/toolrelay/src/acp/editor-tools.js";
import { WorkingRoots } from "../../packages/toolrelay/src/acp/working-roots.js";
import type { CallOutcome } from "../../packages/toolrelay/src/calls/index.js";
import { ToolRegistry, type ClientTool } from "../../packages/toolrelay/src/tools/index.js";
import { runTool } from "../support/run-tool.js";
import { until } from "../support/wait.js";
import { memoryStreamPair, TestEditor, type TestEditorOptions } from "./support/test-editor.js";

let workspace: string;
let root: string;
const open: Array<AgentConnection | ClientConnection> = [];

beforeEach(() => {
  workspace = realpathSync(mkdtempSync(path.join(tmpdir(), "toolrelay-editor-tools-")));
  root = path.join(workspace, "project");
  mkdirSync(path.join(root, "src"), { recursive: true });
  mkdirSync(path.join(workspace, "project-evil"));
  writeFileSync(path.join(root, "notes.md"), "saved on disk\n");
  writeFileSync(path.join(workspace, "project-evil", "secret.txt"), "secret\n");
});

afterEach(() => {
  for (const connection of open.splice(0)) connection.close();
  rmSync(workspace, { recursive: true, force: true });
});

interface Setup {
  editor: TestEditor;
  tools: ClientTool[];
  registry: ToolRegistry;
  run(name: string, input: unknown, signal?: AbortSignal): Promise<CallOutcome>;
}

function setup(options: TestEditorOptions & { requestTimeoutMs?: number; requireExpectedHash?: boolean } = {}): Setup {
  const editor = new TestEditor(options);
  const [agentSide, editorSide] = memoryStreamPair();
  const agentConnection = acpAgent({ name: "agent-under-test" }).connect(agentSide);
  const editorConnection = editor.connect(editorSide);
  open.push(agentConnection, editorConnection);
  const channel = editorChannelFor({
    client: agentConnection.client,
    sessionId: "session-1",
    clientCapabilities: editor.capabilities,
    requestTimeoutMs: options.requestTimeoutMs,
  });
  const tools = createEditorTools({ channel, roots: new WorkingRoots([root]), requireExpectedHash: options.requireExpectedHash });
  const registry = new ToolRegistry(tools);
  return {
    editor,
    tools,
    registry,
    run: (name, input, signal = new AbortController().signal) => runTool(registry, name, input, { signal }),
  };
}

function text(outcome: CallOutcome): string {
  if (outcome.kind === "ok" || outcome.kind === "tool-error")
    return outcome.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
  return JSON.stringify(outcome);
}

describe("which editor tools are offered", () => {
  it("offers each tool only for the capability the editor advertised", () => {
    expect(setup({ fs: { readTextFile: true, writeTextFile: true } }).tools.map((tool) => tool.name)).toEqual([
      "read_editor_buffer",
      "write_via_editor",
    ]);
    expect(setup({ fs: { readTextFile: true, writeTextFile: false } }).tools.map((tool) => tool.name)).toEqual(["read_editor_buffer"]);
    expect(setup({ fs: { readTextFile: false, writeTextFile: true } }).tools.map((tool) => tool.name)).toEqual(["write_via_editor"]);
    expect(setup({ fs: { readTextFile: false, writeTextFile: false } }).tools).toEqual([]);
  });

  it("counts only a literal true as advertised", () => {
    const agentConnection = acpAgent().connect(memoryStreamPair()[0]);
    open.push(agentConnection);
    const channel = editorChannelFor({
      client: agentConnection.client,
      sessionId: "s",
      clientCapabilities: { fs: { readTextFile: "yes" as unknown as boolean } },
    });
    expect(channel).toBeUndefined();
    expect(editorChannelFor({ client: agentConnection.client, sessionId: "s", clientCapabilities: undefined })).toBeUndefined();
  });

  it("marks the read tool readOnly and the write tool destructive; the schemas describe the arguments", () => {
    const { tools } = setup();
    const [read, write] = tools;
    expect(read!.annotations).toEqual({ title: "Read editor buffer", readOnlyHint: true, openWorldHint: false });
    expect(write!.annotations).toEqual({ title: "Write through editor", destructiveHint: true, openWorldHint: false });
    const readSchema = read!.jsonSchema as unknown as { properties: Record<string, { description?: string }>; required: string[] };
    expect(readSchema.required).toEqual(["path"]);
    expect(readSchema.properties.path!.description).toContain(root);
    expect(Object.keys(readSchema.properties)).toEqual(["path", "line", "limit"]);
    const writeSchema = write!.jsonSchema as unknown as { properties: Record<string, unknown>; required: string[] };
    expect(writeSchema.required).toEqual(["path", "content"]);
    expect(Object.keys(writeSchema.properties)).toEqual(["path", "content", "expected_hash"]);
  });
});

describe("read_editor_buffer", () => {
  it("reads the unsaved buffer, not the file on disk, with a hash of the whole buffer", async () => {
    const { editor, run } = setup();
    const file = path.join(root, "notes.md");
    editor.buffers.set(file, "unsaved line 1\nunsaved line 2\n");
    const outcome = await run("read_editor_buffer", { path: file });
    expect(outcome.kind).toBe("ok");
    expect(text(outcome)).toContain("unsaved line 1\nunsaved line 2\n");
    expect(text(outcome)).not.toContain("saved on disk");
    expect(text(outcome)).toContain(`hash="${bufferHash("unsaved line 1\nunsaved line 2\n")}"`);
    expect(text(outcome)).toContain('lines="1-2" total_lines="2"');
    expect(editor.reads).toEqual([expect.objectContaining({ path: file, sessionId: "session-1", outcome: "answered" })]);
  });

  it("shows the requested lines, and still hashes the whole buffer", async () => {
    const { editor, run } = setup();
    const file = path.join(root, "src", "app.ts");
    const buffer = "one\ntwo\nthree\nfour\n";
    editor.buffers.set(file, buffer);
    const outcome = await run("read_editor_buffer", { path: file, line: 2, limit: 2 });
    expect(text(outcome)).toContain('lines="2-3" total_lines="4">\ntwo\nthree\n</editor_buffer>');
    expect(text(outcome)).toContain(`hash="${bufferHash(buffer)}"`);
    const past = await run("read_editor_buffer", { path: file, line: 9 });
    expect(text(past)).toContain("Line 9 is past the end of the buffer (4 lines).");
  });

  it("normalizes the path before asking the editor", async () => {
    const { editor, run } = setup();
    await run("read_editor_buffer", { path: `${root}/src/../notes.md` });
    expect(editor.reads.map((read) => read.path)).toEqual([path.join(root, "notes.md")]);
  });

  it("refuses paths outside the roots as invalid input: the editor is never asked", async () => {
    const { editor, run } = setup();
    for (const bad of [`${root}/../project-evil/secret.txt`, "notes.md", `${root}\0/x`, "/etc/passwd"]) {
      const outcome = await run("read_editor_buffer", { path: bad });
      expect(outcome.kind).toBe("invalid-input");
      if (outcome.kind === "invalid-input") expect(outcome.issues[0]).toMatchObject({ path: "path" });
    }
    expect(editor.reads).toEqual([]);
  });

  it("an editor refusal is a tool error the model can read", async () => {
    const { run } = setup();
    const outcome = await run("read_editor_buffer", { path: path.join(root, "missing.ts") });
    expect(outcome.kind).toBe("tool-error");
    expect(text(outcome)).toContain("The editor refused fs/read_text_file for");
    expect(text(outcome)).toContain("missing.ts");
  });

  it("an editor that does not answer in time: the request is cancelled at its deadline and the call fails", async () => {
    const slow = path.join(root, "slow.txt");
    const { editor, run } = setup({ slowPaths: [slow], requestTimeoutMs: 150 });
    const started = Date.now();
    const outcome = await run("read_editor_buffer", { path: slow });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(outcome.kind).toBe("tool-error");
    expect(text(outcome)).toContain("did not answer fs/read_text_file");
    const read = editor.reads[0]!;
    // The editor got $/cancel_request for exactly that request.
    const cancel = await waitForCancel(editor, read.requestId);
    expect(cancel).toBeDefined();
    await until(() => read.outcome === "cancelled", "the editor's read cancelled", 2_000);
  });

  it("the tool call's signal cancels the editor request at once", async () => {
    const slow = path.join(root, "slow.txt");
    const { editor, run } = setup({ slowPaths: [slow] });
    const controller = new AbortController();
    const running = run("read_editor_buffer", { path: slow }, controller.signal);
    const read = await editor.nextSlowRead();
    const abortedAt = Date.now();
    controller.abort(new Error("turn aborted"));
    const outcome = await running;
    expect(Date.now() - abortedAt).toBeLessThan(1_000);
    expect(outcome.kind).toBe("tool-error");
    expect(text(outcome)).toContain("turn aborted");
    await waitForCancel(editor, read.requestId);
    await until(() => read.outcome === "cancelled", "the editor's read cancelled", 2_000);
  });
});

describe("write_via_editor", () => {
  it("writes through the editor when expected_hash matches the current buffer", async () => {
    const { editor, run } = setup();
    const file = path.join(root, "notes.md");
    editor.buffers.set(file, "unsaved\n");
    const outcome = await run("write_via_editor", { path: file, content: "new text\n", expected_hash: bufferHash("unsaved\n") });
    expect(outcome.kind).toBe("ok");
    expect(text(outcome)).toContain(`Its hash is now ${bufferHash("new text\n")}`);
    expect(editor.buffers.get(file)).toBe("new text\n");
    expect(editor.writes).toEqual([{ path: file, content: "new text\n", sessionId: "session-1" }]);
  });

  it("accepts the full 64-character hash and any case", async () => {
    const { editor, run } = setup();
    const file = path.join(root, "notes.md");
    editor.buffers.set(file, "x");
    const full = (await import("../../packages/toolrelay/src/acp/editor-buffer.js")).fullBufferHash("x").toUpperCase();
    expect((await run("write_via_editor", { path: file, content: "y", expected_hash: full })).kind).toBe("ok");
  });

  it("refuses a stale write: the buffer changed since it was read; nothing is written", async () => {
    const { editor, run } = setup();
    const file = path.join(root, "notes.md");
    editor.buffers.set(file, "what the model read\n");
    const readHash = bufferHash("what the model read\n");
    editor.buffers.set(file, "the user typed more\n");
    const outcome = await run("write_via_editor", { path: file, content: "model's version\n", expected_hash: readHash });
    expect(outcome.kind).toBe("tool-error");
    expect(text(outcome)).toContain("changed since you read it");
    expect(text(outcome)).toContain("Read it again with read_editor_buffer");
    expect(text(outcome)).toContain(bufferHash("the user typed more\n"));
    expect(editor.buffers.get(file)).toBe("the user typed more\n");
    expect(editor.writes).toEqual([]);
  });

  it("a malformed expected_hash is invalid input", async () => {
    const { editor, run } = setup();
    const outcome = await run("write_via_editor", { path: path.join(root, "notes.md"), content: "x", expected_hash: "abc" });
    expect(outcome.kind).toBe("invalid-input");
    expect(editor.writes).toEqual([]);
  });

  it("without expected_hash it overwrites (default) ", async () => {
    const { editor, run } = setup();
    const file = path.join(root, "notes.md");
    editor.buffers.set(file, "unsaved\n");
    expect((await run("write_via_editor", { path: file, content: "over\n" })).kind).toBe("ok");
    expect(editor.buffers.get(file)).toBe("over\n");
  });

  it("with requireExpectedHash it refuses a blind overwrite but creates new files", async () => {
    const { editor, run } = setup({ requireExpectedHash: true });
    const file = path.join(root, "notes.md");
    editor.buffers.set(file, "unsaved\n");
    const refused = await run("write_via_editor", { path: file, content: "over\n" });
    expect(refused.kind).toBe("tool-error");
    expect(text(refused)).toContain("already has content");
    expect(editor.buffers.get(file)).toBe("unsaved\n");
    const created = await run("write_via_editor", { path: path.join(root, "src", "new.ts"), content: "export {};\n" });
    expect(created.kind).toBe("ok");
    expect(editor.buffers.get(path.join(root, "src", "new.ts"))).toBe("export {};\n");
  });

  it("expected_hash without the read capability is refused with a way out", async () => {
    const { editor, run } = setup({ fs: { readTextFile: false, writeTextFile: true } });
    const outcome = await run("write_via_editor", { path: path.join(root, "notes.md"), content: "x", expected_hash: "0123456789abcdef" });
    expect(outcome.kind).toBe("tool-error");
    expect(text(outcome)).toContain("without expected_hash");
    expect(editor.writes).toEqual([]);
  });

  it("refuses paths outside the roots (sibling prefix) as invalid input", async () => {
    const { editor, run } = setup();
    const outcome = await run("write_via_editor", { path: `${root}-evil/secret.txt`, content: "pwned" });
    expect(outcome.kind).toBe("invalid-input");
    expect(editor.writes).toEqual([]);
    expect(editor.reads).toEqual([]);
  });
});

async function waitForCancel(editor: TestEditor, requestId: unknown) {
  return until(
    () =>
      editor.log.find(
        (entry) =>
          entry.direction === "in" &&
          "method" in entry.message &&
          entry.message.method === "$/cancel_request" &&
          (entry.message.params as { requestId?: unknown }).requestId === requestId,
      ),
    "the editor's $/cancel_request",
    2_000,
  );
}
