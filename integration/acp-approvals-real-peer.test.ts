/**
 * A client tool that needs approval, in an ACP agent (startAcpAgent in this process, the real
 * `@agentclientprotocol/sdk` on both sides over in-memory streams) with the REAL Letta Code
 * app-server (0.32.18, local backend, its own process) and a scripted model: the tool asks the
 * user in the editor (`session/request_permission`) once per call — the session's default mode is
 * strict, and the runtime's own `can_use_tool` for a client tool is answered by the SDK, never the
 * editor — runs on "Allow once", not on "Reject" (the model reads the declined text), and an
 * editor that never answers has its request cancelled (`$/cancel_request`) when the approval
 * times out. What the model receives is asserted on the model's own requests.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ClientConnection, RequestPermissionRequest, RequestPermissionResponse } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { startAcpAgent, type AcpAgent } from "../packages/toolrelay/src/acp/index.js";
import { defineTool } from "../packages/toolrelay/src/index.js";
import { choose, memoryStreamPair, neverAnswer, TestEditor } from "../test/acp/support/test-editor.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let workspace: string;
let model: ScriptedModelServer;
let server: LettaAppServer;
let agent: AcpAgent;
let editor: TestEditor;
let connection: ClientConnection;
/** How the editor answers the next permission request. */
let answer: (request: RequestPermissionRequest, signal: AbortSignal) => RequestPermissionResponse | Promise<RequestPermissionResponse>;
/** The session option of the next ACP session. */
let approvalTimeoutMs: number | undefined;
const closed: string[] = [];

const closeTicket = defineTool({
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

beforeAll(async () => {
  workspace = realpathSync(mkdtempSync(path.join(tmpdir(), "toolrelay-acp-approvals-peer-")));
  mkdirSync(path.join(workspace, "project"));
  model = await startScriptedModelServer({
    script: (request) => {
      const result = request.toolResults[0];
      if (result !== undefined) return { text: `done: ${result.text}` };
      const ticket = /^close (T-\d+)/.exec(request.lastUserText)?.[1];
      if (ticket !== undefined) return { toolCalls: [{ id: `call_close_${ticket}`, name: "close_ticket", arguments: { ticket } }] };
      return { text: "pong" };
    },
  });
  server = await startLettaAppServer({ modelUrl: model.url });
  const [agentSide, editorSide] = memoryStreamPair();
  agent = startAcpAgent(agentSide, {
    session: () => ({
      backend: { kind: "local", url: server.url },
      agent: { create: { model: model.modelHandle, name: "toolrelay-acp-approvals" } },
      tools: [closeTicket],
      ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}),
    }),
  });
  editor = new TestEditor({ permission: (request, signal) => answer(request, signal) });
  connection = editor.connect(editorSide);
  await connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: editor.capabilities });
}, 90_000);

afterAll(async () => {
  await agent?.close();
  connection?.close();
  await server?.stop();
  await model?.close();
  rmSync(workspace, { recursive: true, force: true });
});

beforeEach(() => {
  answer = (request) => choose(request, "reject_once");
  approvalTimeoutMs = undefined;
});

async function newSession(): Promise<string> {
  return (await connection.agent.request("session/new", { cwd: path.join(workspace, "project"), mcpServers: [] })).sessionId;
}

function prompt(sessionId: string, words: string) {
  return connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: words }] });
}

/** The tool result the model received for the prompt `words`. */
function resultSeenByModel(words: string, from: number): string | undefined {
  return model.requests.slice(from).find((request) => request.lastUserText.startsWith(words) && request.toolResults.length > 0)
    ?.toolResults[0]?.text;
}

/** The statuses the editor saw for one tool call, in order. */
function statusesOf(toolCallId: string): string[] {
  return editor.updates.flatMap(({ update }) =>
    (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") &&
    update.toolCallId === toolCallId &&
    update.status
      ? [update.status]
      : [],
  );
}

describe("a client tool with needsApproval in an ACP agent, real Letta Code app-server", () => {
  it("asks the editor once through session/request_permission; Allow once runs it and the model reads its result", async () => {
    answer = (request) => choose(request, "allow_once");
    const from = model.requests.length;
    const askedBefore = editor.permissionRequests.length;
    const sessionId = await newSession();
    await expect(prompt(sessionId, "close T-1")).resolves.toEqual({ stopReason: "end_turn" });
    expect(model.requests[from]!.toolNames).toContain("close_ticket");
    expect(editor.permissionRequests.slice(askedBefore)).toEqual([
      {
        sessionId,
        toolCall: {
          toolCallId: "call_close_T-1",
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
      },
    ]);
    expect(closed).toContain("T-1");
    expect(resultSeenByModel("close T-1", from)).toBe("closed T-1");
    expect(statusesOf("call_close_T-1")).toEqual(["pending", "in_progress", "completed"]);
  });

  it("Reject: the tool does not run; the model reads that the user declined it", async () => {
    const from = model.requests.length;
    const askedBefore = editor.permissionRequests.length;
    const sessionId = await newSession();
    await expect(prompt(sessionId, "close T-2")).resolves.toEqual({ stopReason: "end_turn" });
    expect(editor.permissionRequests.length - askedBefore).toBe(1);
    expect(closed).not.toContain("T-2");
    expect(resultSeenByModel("close T-2", from)).toBe("The user declined this call of tool close_ticket; it was not run.");
    expect(statusesOf("call_close_T-2")).toEqual(["pending", "failed"]);
  });

  it("an editor that never answers: when the approval times out its request is cancelled, the tool does not run, the model is told", async () => {
    answer = neverAnswer;
    approvalTimeoutMs = 1_000;
    const from = model.requests.length;
    const logFrom = editor.log.length;
    const sessionId = await newSession();
    await expect(prompt(sessionId, "close T-3")).resolves.toEqual({ stopReason: "end_turn" });
    const log = editor.log.slice(logFrom);
    const asked = log.filter(
      (entry) => entry.direction === "in" && "method" in entry.message && entry.message.method === "session/request_permission",
    );
    expect(asked).toHaveLength(1);
    const askedId = (asked[0]!.message as { id: unknown }).id;
    const cancels = log.filter(
      (entry) => entry.direction === "in" && "method" in entry.message && entry.message.method === "$/cancel_request",
    );
    expect(cancels.map((entry) => (entry.message as { params: { requestId: unknown } }).params.requestId)).toEqual([askedId]);
    expect(editor.cancelledPermissions).toContain(askedId);
    // The editor answered `cancelled` once the agent cancelled it; the agent had stopped waiting.
    expect(log).toContainEqual({
      direction: "out",
      message: { jsonrpc: "2.0", id: askedId, result: { outcome: { outcome: "cancelled" } } },
    });
    expect(closed).not.toContain("T-3");
    expect(resultSeenByModel("close T-3", from)).toBe(
      "Tool close_ticket was not run: it needs the user's approval and nobody answered in time (1 s).",
    );
    expect(statusesOf("call_close_T-3")).toEqual(["pending", "failed"]);
  });
});
