/**
 * Approvals of client tools in an ACP agent: a tool whose `needsApproval` says so asks the user in
 * the editor (`session/request_permission`), runs on "Allow once", not on "Reject", and a request
 * that became moot (the approval timed out, the prompt was cancelled) is cancelled in the editor
 * with `$/cancel_request`. The real ACP SDK on both sides (in memory), the scripted runtime behind
 * the agent's toolrelay sessions.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ClientConnection, PromptResponse } from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { presentToolCall, startAcpAgent, type AcpAgent, type AcpAgentOptions } from "../../packages/toolrelay/src/acp/index.js";
import type { SessionOptions } from "../../packages/toolrelay/src/index.js";
import {
  startScriptedRuntime,
  type ScriptedRuntime,
  type StartScriptedRuntimeOptions,
} from "../../packages/toolrelay/src/testing/index.js";
import { defineTool, type ClientTool } from "../../packages/toolrelay/src/tools/index.js";
import { until } from "../support/wait.js";
import { choose, memoryStreamPair, neverAnswer, TestEditor, type TestEditorOptions } from "./support/test-editor.js";

let workspace: string;
let root: string;
const cleanups: Array<() => Promise<void> | void> = [];

beforeEach(() => {
  workspace = realpathSync(mkdtempSync(path.join(tmpdir(), "toolrelay-acp-approvals-")));
  root = path.join(workspace, "project");
  mkdirSync(root);
  writeFileSync(path.join(root, "notes.md"), "saved on disk\n");
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  rmSync(workspace, { recursive: true, force: true });
});

/** A client tool that needs approval; `closed` lists the tickets it really closed. */
function closeTicketTool(closed: string[]): ClientTool {
  return defineTool({
    name: "close_ticket",
    description: "Close a support ticket.",
    inputSchema: z.object({ ticket: z.string() }),
    annotations: { title: "Close ticket", destructiveHint: true },
    needsApproval: true,
    execute({ ticket }) {
      closed.push(ticket);
      return `closed ${ticket}`;
    },
  });
}

interface Harness {
  runtime: ScriptedRuntime;
  agent: AcpAgent;
  editor: TestEditor;
  connection: ClientConnection;
  newSession(): Promise<string>;
  prompt(sessionId: string, text: string): Promise<PromptResponse>;
}

async function harness(
  script: StartScriptedRuntimeOptions["script"],
  options: { editor?: TestEditorOptions; session?: Partial<SessionOptions>; agent?: Partial<AcpAgentOptions> } = {},
): Promise<Harness> {
  const runtime = await startScriptedRuntime({ script });
  cleanups.push(() => runtime.close());
  const [agentSide, editorSide] = memoryStreamPair();
  const agent = startAcpAgent(agentSide, {
    session: () => ({
      backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
      agent: { create: { model: "scripted/test" } },
      ...options.session,
    }),
    ...options.agent,
  });
  cleanups.push(() => agent.close());
  const editor = new TestEditor(options.editor);
  const connection = editor.connect(editorSide);
  cleanups.push(() => connection.close());
  await connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: editor.capabilities });
  return {
    runtime,
    agent,
    editor,
    connection,
    newSession: async () => (await connection.agent.request("session/new", { cwd: root, mcpServers: [] })).sessionId,
    prompt: (sessionId, text) => connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }),
  };
}

const resultText = (result: { content: Array<{ text?: string }>; error?: string }) =>
  result.error ?? result.content.map((part) => part.text ?? "").join("");

/** The statuses the editor saw for one tool call, in order. */
function statusesOf(editor: TestEditor, toolCallId: string): string[] {
  return editor.updates.flatMap(({ update }) =>
    (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") &&
    update.toolCallId === toolCallId &&
    update.status
      ? [update.status]
      : [],
  );
}

/** The `$/cancel_request` notifications the agent sent, by the id of the request they cancel. */
function cancelledRequestIds(editor: TestEditor): unknown[] {
  return editor.log.flatMap((entry) =>
    entry.direction === "in" && "method" in entry.message && entry.message.method === "$/cancel_request"
      ? [(entry.message.params as { requestId: unknown }).requestId]
      : [],
  );
}

describe("client tools that need approval, asked in the editor", () => {
  it("asks through session/request_permission, titled and kinded by the tool's annotations; Allow once runs it", async () => {
    const closed: string[] = [];
    const results: string[] = [];
    const h = await harness(
      async (turn) => void results.push(resultText(await turn.callTool("close_ticket", { ticket: "T-1" }, { toolCallId: "call-close-1" }))),
      { session: { tools: [closeTicketTool(closed)] } },
    );
    const sessionId = await h.newSession();
    await expect(h.prompt(sessionId, "close T-1")).resolves.toEqual({ stopReason: "end_turn" });
    expect(h.editor.permissionRequests).toHaveLength(1);
    expect(h.editor.permissionRequests[0]).toEqual({
      sessionId,
      toolCall: {
        toolCallId: "call-close-1",
        title: "Close ticket",
        kind: "edit",
        status: "pending",
        rawInput: { ticket: "T-1" },
        locations: [],
      },
      options: [
        { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
        { optionId: "allow_always", name: "Always allow close_ticket", kind: "allow_always" },
        { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      ],
    });
    expect(closed).toEqual(["T-1"]);
    expect(results).toEqual(["closed T-1"]);
    expect(statusesOf(h.editor, "call-close-1")).toEqual(["pending", "in_progress", "completed"]);
    // The call the editor shows is presented as its permission request is.
    expect(h.editor.updates.find(({ update }) => update.sessionUpdate === "tool_call")?.update).toMatchObject({
      toolCallId: "call-close-1",
      title: "Close ticket",
      kind: "edit",
    });
    // The editor heard of the call (tool_call) before it was asked about it.
    const announced = h.editor.log.findIndex(
      (entry) => entry.direction === "in" && "method" in entry.message && entry.message.method === "session/update",
    );
    const asked = h.editor.log.findIndex(
      (entry) => entry.direction === "in" && "method" in entry.message && entry.message.method === "session/request_permission",
    );
    expect(announced).toBeGreaterThanOrEqual(0);
    expect(announced).toBeLessThan(asked);
  });

  it("Reject: the tool does not run, the model reads the declined text, the editor shows the call failed", async () => {
    const closed: string[] = [];
    const results: string[] = [];
    const h = await harness(
      async (turn) => void results.push(resultText(await turn.callTool("close_ticket", { ticket: "T-2" }, { toolCallId: "call-close-2" }))),
      { session: { tools: [closeTicketTool(closed)] }, editor: { permission: (request) => choose(request, "reject_once") } },
    );
    const sessionId = await h.newSession();
    await expect(h.prompt(sessionId, "close T-2")).resolves.toEqual({ stopReason: "end_turn" });
    expect(h.editor.permissionRequests).toHaveLength(1);
    expect(closed).toEqual([]);
    expect(results).toEqual(["The user declined this call of tool close_ticket; it was not run."]);
    expect(statusesOf(h.editor, "call-close-2")).toEqual(["pending", "failed"]);
  });

  it("Always allow <tool> is remembered for that ACP session only", async () => {
    const closed: string[] = [];
    const h = await harness(
      async (turn) => {
        await turn.callTool("close_ticket", { ticket: "A" });
        await turn.callTool("close_ticket", { ticket: "B" });
      },
      { session: { tools: [closeTicketTool(closed)] }, editor: { permission: (request) => choose(request, "allow_always") } },
    );
    const first = await h.newSession();
    await h.prompt(first, "close two");
    expect(h.editor.permissionRequests.map((request) => request.sessionId)).toEqual([first]);
    expect(closed).toEqual(["A", "B"]);
    const second = await h.newSession();
    await h.prompt(second, "close two again");
    expect(h.editor.permissionRequests.map((request) => request.sessionId)).toEqual([first, second]);
    expect(closed).toEqual(["A", "B", "A", "B"]);
  });

  it("an editor that never answers: the approval times out, the editor's request is cancelled, the tool does not run", async () => {
    const closed: string[] = [];
    const results: string[] = [];
    const h = await harness(
      async (turn) => void results.push(resultText(await turn.callTool("close_ticket", { ticket: "T-3" }, { toolCallId: "call-close-3" }))),
      { session: { tools: [closeTicketTool(closed)], approvalTimeoutMs: 1_000 }, editor: { permission: neverAnswer } },
    );
    const sessionId = await h.newSession();
    await expect(h.prompt(sessionId, "close T-3")).resolves.toEqual({ stopReason: "end_turn" });
    const permissionId = h.editor.log.find(
      (entry) => entry.direction === "in" && "method" in entry.message && entry.message.method === "session/request_permission",
    )?.message as { id: unknown } | undefined;
    expect(permissionId?.id).toBeDefined();
    expect(cancelledRequestIds(h.editor)).toEqual([permissionId!.id]);
    expect(h.editor.cancelledPermissions).toEqual([permissionId!.id]);
    expect(closed).toEqual([]);
    expect(results).toEqual(["Tool close_ticket was not run: it needs the user's approval and nobody answered in time (1 s)."]);
    expect(statusesOf(h.editor, "call-close-3")).toEqual(["pending", "failed"]);
  });

  it("session/cancel while the editor asks: the request is cancelled, the tool does not run, the prompt ends cancelled", async () => {
    const closed: string[] = [];
    const h = await harness(
      async (turn) => {
        await turn.callTool("close_ticket", { ticket: "T-4" });
        await turn.say("should not be said");
      },
      { session: { tools: [closeTicketTool(closed)] }, editor: { permission: neverAnswer } },
    );
    const sessionId = await h.newSession();
    const prompt = h.prompt(sessionId, "close T-4");
    await until(() => h.editor.permissionRequests.length === 1, "the editor asked");
    await h.connection.agent.notify("session/cancel", { sessionId });
    await expect(prompt).resolves.toEqual({ stopReason: "cancelled" });
    await until(() => h.editor.cancelledPermissions.length === 1, "the editor's permission request cancelled");
    expect(cancelledRequestIds(h.editor)).toEqual(h.editor.cancelledPermissions);
    expect(closed).toEqual([]);
  });

  it("the toolrelay session closing while the editor asks: the request is cancelled, the tool does not run", async () => {
    const closed: string[] = [];
    const h = await harness(async (turn) => void (await turn.callTool("close_ticket", { ticket: "T-6" })), {
      session: { tools: [closeTicketTool(closed)] },
      editor: { permission: neverAnswer },
    });
    const sessionId = await h.newSession();
    const prompt = h.prompt(sessionId, "close T-6");
    prompt.catch(() => undefined); // how the prompt ends once its session is gone is not this test's subject
    await until(() => h.editor.permissionRequests.length === 1, "the editor asked");
    await h.agent.sessionOf(sessionId)!.close();
    await until(() => h.editor.cancelledPermissions.length === 1, "the editor's permission request cancelled");
    expect(cancelledRequestIds(h.editor)).toEqual(h.editor.cancelledPermissions);
    expect(closed).toEqual([]);
  });

  it("an editor that fails the request: the client tool does not run, its approval could not be checked", async () => {
    const closed: string[] = [];
    const results: string[] = [];
    const errors: string[] = [];
    const h = await harness(async (turn) => void results.push(resultText(await turn.callTool("close_ticket", { ticket: "T-5" }))), {
      session: { tools: [closeTicketTool(closed)] },
      editor: {
        permission: () => {
          throw new Error("the dialog crashed");
        },
      },
      agent: { onError: (error) => errors.push(`${String(error)} (cause: ${String((error as { cause?: unknown }).cause)})`) },
    });
    const sessionId = await h.newSession();
    await h.prompt(sessionId, "close T-5");
    expect(closed).toEqual([]);
    expect(results).toEqual(["Tool close_ticket was not run: its approval could not be checked (the approval callback failed)."]);
    // The agent's onError hears that the callback failed and why (the editor's failure), never the tool's input.
    await until(
      () => errors.some((error) => error.includes("the editor could not be asked")),
      () => `the failure reported: ${errors}`,
    );
    expect(errors.join("\n")).not.toContain("T-5");
  });
});

describe("runtime tools, asked in the editor", () => {
  it("a runtime tool's request the editor leaves open is cancelled in the editor when the approval times out", async () => {
    const results: string[] = [];
    const h = await harness(async (turn) => void results.push(resultText(await turn.callTool("Bash", { command: "rm -rf build" }))), {
      session: { approvalTimeoutMs: 1_000 },
      editor: { permission: neverAnswer },
    });
    const sessionId = await h.newSession();
    await expect(h.prompt(sessionId, "clean")).resolves.toEqual({ stopReason: "end_turn" });
    expect(h.editor.permissionRequests.map((request) => request.toolCall.title)).toEqual(["Bash: rm -rf build"]);
    await until(() => h.editor.cancelledPermissions.length === 1, "the editor's permission request cancelled");
    expect(cancelledRequestIds(h.editor)).toEqual(h.editor.cancelledPermissions);
    expect(results).toEqual([expect.stringContaining("Permission for Bash was denied: nobody answered within 1 s.")]);
  });
});

describe("the editor tools' writes", () => {
  const write = (content: string) => ({ path: path.join(root, "notes.md"), content });

  it("in the default mode write_via_editor asks first and a rejected write changes nothing; read_editor_buffer never asks", async () => {
    const results: string[] = [];
    const h = await harness(
      async (turn) => {
        results.push(resultText(await turn.callTool("read_editor_buffer", { path: path.join(root, "notes.md") })));
        results.push(resultText(await turn.callTool("write_via_editor", write("rejected\n"))));
        results.push(resultText(await turn.callTool("write_via_editor", write("allowed\n"))));
      },
      { editor: { permission: (request) => choose(request, h.editor.permissionRequests.length === 1 ? "reject_once" : "allow_once") } },
    );
    const sessionId = await h.newSession();
    await h.prompt(sessionId, "rewrite");
    expect(h.editor.permissionRequests.map((request) => request.toolCall)).toEqual([
      expect.objectContaining({ title: `Write ${path.join(root, "notes.md")} (through the editor)`, kind: "edit" }),
      expect.objectContaining({ title: `Write ${path.join(root, "notes.md")} (through the editor)`, kind: "edit" }),
    ]);
    expect(h.editor.permissionRequests[0]!.toolCall.locations).toEqual([{ path: path.join(root, "notes.md") }]);
    expect(results[0]).toContain("saved on disk");
    expect(results[1]).toBe("The user declined this call of tool write_via_editor; it was not run.");
    expect(results[2]).toContain("Wrote 8 characters");
    expect(h.editor.writes.map((entry) => entry.content)).toEqual(["allowed\n"]);
  });

  it("in the acceptEdits mode (the user agreed to edits) write_via_editor writes unasked; editor.writeNeedsApproval overrides", async () => {
    const script: StartScriptedRuntimeOptions["script"] = async (turn) => void (await turn.callTool("write_via_editor", write("x\n")));
    const accepting = await harness(script, { session: { mode: "acceptEdits" } });
    await accepting.prompt(await accepting.newSession(), "write");
    expect(accepting.editor.permissionRequests).toEqual([]);
    expect(accepting.editor.writes).toHaveLength(1);

    const strictAnyway = await harness(script, { session: { mode: "acceptEdits" }, agent: { editor: { writeNeedsApproval: true } } });
    await strictAnyway.prompt(await strictAnyway.newSession(), "write");
    expect(strictAnyway.editor.permissionRequests.map((request) => request.toolCall.title)).toEqual([
      `Write ${path.join(root, "notes.md")} (through the editor)`,
    ]);
    expect(strictAnyway.editor.writes).toHaveLength(1);
  });
});

describe("presentToolCall with annotations", () => {
  it("a tool it does not know: title from annotations.title, kind from the hints", () => {
    expect(presentToolCall("close_ticket", { ticket: "T-1" }, { title: "Close ticket", destructiveHint: true })).toEqual({
      title: "Close ticket",
      kind: "edit",
      locations: [],
    });
    expect(presentToolCall("lookup", { query: "refunds" }, { title: "Look up", readOnlyHint: true })).toEqual({
      title: "Look up: refunds",
      kind: "read",
      locations: [],
    });
    expect(presentToolCall("lookup", {}, {})).toEqual({ title: "lookup", kind: "other", locations: [] });
    expect(presentToolCall("lookup", {}, { title: "  " })).toEqual({ title: "lookup", kind: "other", locations: [] });
    // A tool it knows keeps its own kind.
    expect(presentToolCall("Bash", { command: "ls" }, { readOnlyHint: true })).toMatchObject({ title: "Bash: ls", kind: "execute" });
  });
});
