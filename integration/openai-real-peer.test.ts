/**
 * The OpenAI chat bridge end to end: the REAL `openai` npm client (streaming and not) against the
 * bridge, backed by the REAL Letta Code app-server (0.32.18, a process) and a scripted model. The
 * client declares `read_file`; the agent's call comes back as `tool_calls`; the follow-up request's
 * tool message settles the pending call and the agent's answer uses the result; the runtime's cwd
 * is a scratch directory; a client's own `Read` replaces the runtime's; a follow-up that never
 * comes times out cleanly.
 */
import type OpenAI from "openai";
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { workspacesRoot } from "../packages/toolrelay/src/session/isolated-workspace.js";
import type { OpenAiBridge } from "../packages/toolrelay/src/openai/index.js";
import type { ModelRequest, ScriptedModelServer, ScriptedReply } from "../test/support/scripted-model-server.js";
import { startBridgeStack, type BridgeStack } from "./support/openai-bridge-stack.js";

const API_KEY = "bridge-test-key";
const readFile: ChatCompletionFunctionTool = {
  type: "function",
  function: {
    name: "read_file",
    description: "Reads a file of the user's workspace",
    parameters: { type: "object", properties: { path: { type: "string", description: "Path of the file" } }, required: ["path"] },
  },
};

/** "read <path>" → narration + read_file; after a tool result → "The file says: <text>"; "where" → the runtime's own Bash. */
function script(request: ModelRequest): ScriptedReply {
  if (request.lastMessage?.role === "tool")
    return { text: `The file says: ${request.toolResults.map((result) => result.text).join(" | ")}` };
  const user = request.lastUserText;
  const read = /read (\S+)/.exec(user);
  if (read) return { text: "Let me read it.", toolCalls: [{ name: "read_file", arguments: { path: read[1] } }] };
  return { text: `echo: ${user}` };
}

let stack: BridgeStack;
let model: ScriptedModelServer;
let bridge: OpenAiBridge;
let client: OpenAI;

beforeAll(async () => {
  stack = await startBridgeStack(script, "openai-bridge", { apiKeys: [API_KEY], toolResultTimeoutMs: 2_000 });
  ({ model, bridge } = stack);
  client = stack.client(API_KEY);
}, 60_000);

afterAll(() => stack?.stop());

beforeEach(() => model.setScript(script));

/** The model request whose last user text is `text` (the turn that message started). */
function requestFor(text: string): ModelRequest {
  const found = model.requests.find((request) => request.lastUserText === text && request.lastMessage?.role === "user");
  if (!found) throw new Error(`no model request for "${text}"`);
  return found;
}

/** The working directory the runtime told the model about (its system reminder in the first user message). */
function cwdSeenBy(request: ModelRequest): string | undefined {
  const text = JSON.stringify(request.messages);
  return /Current working directory\*\*: ([^\\\n]+)/.exec(text)?.[1];
}

describe("OpenAI chat bridge against the real app-server, with the real openai client", () => {
  it("non-streaming: read_file comes back as tool_calls with the narration; the tool message's result reaches the agent's answer", async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "Please read notes.txt" }];
    const first = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Let me read it.");
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe("function");
    if (call.type !== "function") throw new Error("not a function call");
    expect(call.function.name).toBe("read_file");
    expect(JSON.parse(call.function.arguments)).toEqual({ path: "notes.txt" });
    expect(call.id).toMatch(/^call_/);

    messages.push(choice.message, { role: "tool", tool_call_id: call.id, content: "buy milk" });
    const second = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(second.choices[0]!.finish_reason).toBe("stop");
    expect(second.choices[0]!.message.content).toBe("The file says: buy milk");
    expect(second.choices[0]!.message.tool_calls ?? []).toEqual([]);
    // The pending external call was settled with the client's text: the model read it as the tool result.
    const followUp = model.requests.find((request) => request.lastMessage?.role === "tool" && request.toolResults[0]?.text === "buy milk");
    expect(followUp).toBeDefined();
    // The runtime worked in an empty scratch directory, not the bridge's own cwd.
    const cwd = cwdSeenBy(requestFor("Please read notes.txt"));
    expect(cwd).toBeDefined();
    expect(cwd!.startsWith(workspacesRoot())).toBe(true);
    expect(cwd).not.toBe(process.cwd());
  });

  it("streaming: the tool call and then the answer stream through the openai client's stream helper", async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "Now read todo.md" }];
    const stream = client.chat.completions.stream({ model: "letta-code", messages, tools: [readFile] });
    const first = await stream.finalChatCompletion();
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Let me read it.");
    const call = choice.message.tool_calls![0]!;
    if (call.type !== "function") throw new Error("not a function call");
    expect(call.function.name).toBe("read_file");
    expect(JSON.parse(call.function.arguments)).toEqual({ path: "todo.md" });

    messages.push(
      { role: "assistant", content: choice.message.content, tool_calls: choice.message.tool_calls },
      { role: "tool", tool_call_id: call.id, content: "ship it" },
    );
    const chunks: string[] = [];
    const raw = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile], stream: true });
    let finish: string | null = null;
    for await (const chunk of raw) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) chunks.push(delta.content);
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(chunks.join("")).toBe("The file says: ship it");
    expect(finish).toBe("stop");
  });

  it("a client's own Read replaces the runtime's for its thread: the model is offered one Read, the client's, and its call comes back", async () => {
    const clientRead: ChatCompletionFunctionTool = {
      type: "function",
      function: {
        name: "Read",
        description: "CLIENT-READ: reads a file from the editor's open buffers",
        parameters: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
      },
    };
    model.setScript((request) => {
      if (request.lastMessage?.role === "tool") return script(request);
      const read = /client-read (\S+)/.exec(request.lastUserText);
      if (read) return { text: "Reading it.", toolCalls: [{ name: "Read", arguments: { file_path: read[1] } }] };
      return script(request);
    });
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "client-read buffer.txt" }];
    const first = await client.chat.completions.create({ model: "letta-code", messages, tools: [clientRead] });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    const call = choice.message.tool_calls![0]!;
    if (call.type !== "function") throw new Error("not a function call");
    expect(call.function.name).toBe("Read");
    expect(JSON.parse(call.function.arguments)).toEqual({ file_path: "buffer.txt" });
    const offeredReads = requestFor("client-read buffer.txt").tools.filter((tool) => tool.function.name === "Read");
    expect(offeredReads).toHaveLength(1);
    expect(offeredReads[0]!.function.description).toBe("CLIENT-READ: reads a file from the editor's open buffers");

    messages.push(choice.message, { role: "tool", tool_call_id: call.id, content: "unsaved edits" });
    const second = await client.chat.completions.create({ model: "letta-code", messages, tools: [clientRead] });
    expect(second.choices[0]!.finish_reason).toBe("stop");
    expect(second.choices[0]!.message.content).toBe("The file says: unsaved edits");
  });

  it("a follow-up that never comes: the call's timeout answers the runtime, and the next request starts cleanly", async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "read never.txt" }];
    const first = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const waiting = bridge.threads().filter((thread) => thread.waitingForTools);
    expect(waiting).toHaveLength(1);
    const threadId = waiting[0]!.id;
    // The runtime is answered by the bridge's timeout (2 s here), and the waiting turn is stopped.
    await vi.waitFor(() => expect(bridge.threads().find((thread) => thread.id === threadId)?.waitingForTools).toBe(false), {
      timeout: 10_000,
    });

    // The client moves on with a new message (its history still holds the unanswered call).
    messages.push(first.choices[0]!.message, { role: "user", content: "never mind, say hi" });
    const next = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(next.choices[0]!.finish_reason).toBe("stop");
    expect(next.choices[0]!.message.content).toBe("echo: never mind, say hi");
    // The same conversation: the runtime recorded the timeout as the call's result, then the stop.
    const history = requestFor("never mind, say hi").messages;
    const timedOut = history.find((message) => message.role === "tool");
    expect(timedOut?.content).toBe(
      "Error: tool read_file timed out after 2000 ms. It may have applied its effects: inspect state before retrying.",
    );
    expect(bridge.threads().find((thread) => thread.id === threadId)).toMatchObject({ busy: false, waitingForTools: false });
  });
});
