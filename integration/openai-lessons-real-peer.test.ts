/**
 * The lessons of the bridge this one learned from, each checked against the REAL Letta Code
 * app-server with the REAL `openai` client: the runtime's workspace is an empty scratch directory
 * whenever the client owns tool execution (stated by configuration, not guessed from an empty tool
 * list); the "call a tool" nudge is dropped once the request's own result arrived and kept for an
 * earlier request's; legacy-prefixed tool names still resolve; tools the client did not declare are
 * never returned to it; several calls of one model response come back together; a changed tool
 * set is re-registered.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defaultToolNudge, startOpenAiBridge, type OpenAiBridge } from "../packages/toolrelay/src/openai/index.js";
import { workspacesRoot } from "../packages/toolrelay/src/session/isolated-workspace.js";
import {
  messageText,
  type ChatMessage,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedReply,
} from "../test/support/scripted-model-server.js";
import { startBridgeStack, type BridgeStack } from "./support/openai-bridge-stack.js";

const tool = (name: string, description = `Client tool ${name}`): ChatCompletionFunctionTool => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
});
const readFile = tool("read_file", "Reads a file of the user's workspace");
const NUDGE = defaultToolNudge(["read_file"]);

let stack: BridgeStack;
let model: ScriptedModelServer;
let server: BridgeStack["server"];
let bridge: OpenAiBridge;
let client: OpenAI;
const cleanups: Array<() => Promise<void>> = [];

function script(request: ModelRequest): ScriptedReply {
  const user = request.lastUserText;
  if (request.lastMessage?.role === "tool") return { text: `results: ${request.toolResults.map((result) => result.text).join(" | ")}` };
  if (user.includes("WHERE"))
    return { toolCalls: [{ name: "Bash", arguments: { command: "pwd; ls -A | wc -l", description: "where am I" } }] };
  if (user.includes("TWO"))
    return {
      text: "Reading both.",
      toolCalls: [
        { name: "read_file", arguments: { path: "a.txt" } },
        { name: "read_file", arguments: { path: "b.txt" } },
      ],
    };
  if (user.includes("UNDECLARED")) return { toolCalls: [{ name: "write_file", arguments: { path: "x" } }] };
  const read = /read (\S+)/.exec(user);
  if (read) return { text: "Let me read it.", toolCalls: [{ name: "read_file", arguments: { path: read[1] } }] };
  return { text: `echo: ${user}` };
}

beforeAll(async () => {
  // mode "unrestricted": the workspace lessons are probed with the runtime's own Bash (`pwd`),
  // which the default mode (strict) would deny, the bridge having no canUseTool.
  stack = await startBridgeStack(script, "openai-lessons", { toolResultTimeoutMs: 1_500, session: { mode: "unrestricted" } });
  ({ model, server, bridge } = stack);
  client = stack.client();
}, 60_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await stack?.stop();
});

/** The last model request of the turn that started with user text `text`. */
function lastRequestFor(text: string): ModelRequest {
  const start = model.requests.findIndex((request) => request.lastUserText === text && request.lastMessage?.role === "user");
  if (start < 0) throw new Error(`no model request for "${text}"`);
  return model.requests[start]!;
}

/** The texts of a message's content parts. */
function partsOf(message: ChatMessage | undefined): string[] {
  if (message === undefined) return [];
  return Array.isArray(message.content) ? message.content.map((part) => messageText([part])) : [messageText(message.content)];
}

const countNudges = (request: ModelRequest) => request.messages.flatMap(partsOf).filter((part) => part.includes(NUDGE)).length;

describe("the bridge's lessons, against the real app-server", () => {
  it("client-owned execution: the runtime's cwd is an empty scratch directory, also for a request with no tools", async () => {
    for (const tools of [[readFile], undefined]) {
      const answer = await client.chat.completions.create({
        model: "letta-code",
        messages: [{ role: "user", content: `WHERE ${tools ? "with" : "without"} tools` }],
        ...(tools ? { tools } : {}),
      });
      expect(answer.choices[0]!.finish_reason).toBe("stop");
      const [cwd, count] = answer.choices[0]!.message.content!.replace(/^results: /, "")
        .trim()
        .split(/\s+/);
      expect(cwd!.startsWith(workspacesRoot())).toBe(true);
      expect(count).toBe("0");
    }
  });

  it("runtime-owned execution is stated explicitly: its workspace is used and the request's tools are not offered", async () => {
    const workspace = await mkdtemp(join(tmpdir(), "bridge-runtime-ws-"));
    cleanups.push(() => rm(workspace, { recursive: true, force: true }));
    const runtimeBridge = await startOpenAiBridge({
      backend: { kind: "local", url: server.url },
      agent: { create: { model: model.modelHandle, name: "openai-runtime-tools" } },
      toolExecution: "runtime",
      workspace: { cwd: workspace },
      // The runtime's own tools are the subject: named explicitly (the bridge refuses "runtime"
      // execution in the default mode without a canUseTool).
      session: { mode: "unrestricted" },
    });
    cleanups.push(() => runtimeBridge.close());
    const runtimeClient = new OpenAI({ apiKey: "unused", baseURL: runtimeBridge.url, maxRetries: 0 });
    const from = model.requests.length;
    const answer = await runtimeClient.chat.completions.create({
      model: "letta-code",
      messages: [{ role: "user", content: "WHERE runtime" }],
      tools: [readFile],
    });
    expect(answer.choices[0]!.message.content).toContain(workspace);
    expect(model.requests[from]!.toolNames).toContain("Bash");
    expect(model.requests[from]!.toolNames).not.toContain("read_file");
    expect(countNudges(model.requests[from]!)).toBe(0);
  });

  it("the nudge: added to a new user message, not repeated when the request's own result arrives (pending or late), kept after an earlier request's result", async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "read first.txt" }];
    const first = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(countNudges(lastRequestFor("read first.txt"))).toBe(1);
    const call = first.choices[0]!.message.tool_calls![0]!;
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "FIRST" });
    const from = model.requests.length;
    const second = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(second.choices[0]!.message.content).toBe("results: FIRST");
    // The continuation: the tool result is the last message; no new nudge came with it.
    const continuation = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!;
    expect(countNudges(continuation)).toBe(1);

    // A late result: the call timed out (1.5 s), its turn was stopped; the result then comes as input without a nudge.
    messages.push(second.choices[0]!.message, { role: "user", content: "read late.txt" });
    const third = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    const lateCall = third.choices[0]!.message.tool_calls![0]!;
    await vi.waitFor(() => expect(bridge.threads().some((thread) => thread.waitingForTools)).toBe(false), { timeout: 10_000 });
    messages.push(third.choices[0]!.message, { role: "tool", tool_call_id: lateCall.id, content: "LATE" });
    const lateFrom = model.requests.length;
    const fourth = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(fourth.choices[0]!.finish_reason).toBe("stop");
    const lateInput = model.requests[lateFrom]!.lastMessage!;
    expect(lateInput.role).toBe("user");
    expect(partsOf(lateInput).join("\n")).toContain(
      `Result of your earlier call to read_file (id ${lateCall.id}), which the client sent after the call had ended:\nLATE`,
    );
    expect(partsOf(lateInput).some((part) => part.includes(NUDGE))).toBe(false);

    // A new user message whose history holds results of earlier requests: the nudge is back.
    messages.push(fourth.choices[0]!.message, { role: "user", content: "and now?" });
    await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(partsOf(lastRequestFor("and now?").lastMessage).some((part) => part.includes(NUDGE))).toBe(true);
  });

  it("legacy-prefixed tool names resolve: a declared functions.read_file, and a client that echoes mcp__client__read_file", async () => {
    const legacy: ChatCompletionFunctionTool = { ...readFile, function: { ...readFile.function, name: "functions.read_file" } };
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "read legacy.txt" }];
    const first = await client.chat.completions.create({ model: "letta-code", messages, tools: [legacy] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    if (call.type !== "function") throw new Error("not a function call");
    // The agent saw (and called) read_file; the client gets its own name back.
    expect(lastRequestFor("read legacy.txt").toolNames).toContain("read_file");
    expect(call.function.name).toBe("functions.read_file");
    // The client's transcript store rewrote the name; the thread still matches and the call settles.
    const echoed = {
      role: "assistant" as const,
      content: first.choices[0]!.message.content,
      tool_calls: [{ ...call, function: { ...call.function, name: "mcp__client__read_file" } }],
    };
    messages.push(echoed, { role: "tool", tool_call_id: call.id, content: "LEGACY" });
    const second = await client.chat.completions.create({ model: "letta-code", messages, tools: [legacy] });
    expect(second.choices[0]!.message.content).toBe("results: LEGACY");
  });

  it("an older transcript with prefixed names seeds a new conversation with the plain names", async () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: "user", content: "look at old.txt" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "old_1", type: "function", function: { name: "mcp__client__read_file", arguments: '{"path":"old.txt"}' } }],
      },
      { role: "tool", tool_call_id: "old_1", content: "OLD CONTENT" },
      { role: "assistant", content: "It says OLD CONTENT." },
      { role: "user", content: "summarise that" },
    ];
    const answer = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(answer.choices[0]!.message.content).toBe("echo: summarise that");
    const seeded = partsOf(lastRequestFor("summarise that").lastMessage).join("\n");
    expect(seeded).toContain('[assistant called read_file (id old_1) with {"path":"old.txt"}]');
    expect(seeded).toContain("[result of read_file (id old_1)] OLD CONTENT");
    expect(seeded).not.toContain("mcp__client__");
  });

  it("tools the client did not declare are never returned: the runtime's Bash, and a tool of an earlier request", async () => {
    const bash = await client.chat.completions.create({
      model: "letta-code",
      messages: [{ role: "user", content: "WHERE again" }],
      tools: [readFile],
    });
    expect(bash.choices[0]!.finish_reason).toBe("stop");
    expect(bash.choices[0]!.message.tool_calls ?? []).toEqual([]);

    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "read w.txt" }];
    const first = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile, tool("write_file")] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "W" });
    const second = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile, tool("write_file")] });
    messages.push(second.choices[0]!.message, { role: "user", content: "UNDECLARED now" });
    const from = model.requests.length;
    const third = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(third.choices[0]!.finish_reason).toBe("stop");
    expect(third.choices[0]!.message.tool_calls ?? []).toEqual([]);
    // write_file was unregistered when the request stopped declaring it: the model was not offered it.
    expect(model.requests[from]!.toolNames).not.toContain("write_file");
    expect(model.requests[from]!.toolNames).toContain("read_file");
    const refused = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!;
    expect(refused.toolResults[0]!.text).toMatch(/write_file/);
  });

  it("two calls of one model response come back in one response; one follow-up settles both", async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "TWO files please" }];
    const first = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile], stream: false });
    const calls = first.choices[0]!.message.tool_calls!;
    expect(first.choices[0]!.message.content).toBe("Reading both.");
    expect(calls.map((call) => (call.type === "function" ? JSON.parse(call.function.arguments) : undefined))).toEqual([
      { path: "a.txt" },
      { path: "b.txt" },
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
    messages.push(
      first.choices[0]!.message,
      { role: "tool", tool_call_id: calls[0]!.id, content: "AAA" },
      { role: "tool", tool_call_id: calls[1]!.id, content: "BBB" },
    );
    const second = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(second.choices[0]!.message.content).toBe("results: AAA | BBB");
  });
});
