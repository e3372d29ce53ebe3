/**
 * Threads of the OpenAI chat bridge against the REAL Letta Code app-server, with the REAL `openai`
 * client: which Letta conversation a request continues (its transcript prefix, or an explicit
 * key), what a second, unrelated client sees, and what happens when a client goes away or sends
 * two requests for one thread at once.
 */
import type OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { OpenAiBridge } from "../packages/toolrelay/src/openai/index.js";
import type { ModelRequest, ScriptedModelServer, ScriptedReply } from "../test/support/scripted-model-server.js";
import { leaveMidStream } from "../test/support/leave-mid-stream.js";
import { startBridgeStack, type BridgeStack } from "./support/openai-bridge-stack.js";

const KEY_A = "key-of-client-a";
const KEY_B = "key-of-client-b";
const readFile = {
  type: "function" as const,
  function: {
    name: "read_file",
    description: "Reads a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
};

function script(request: ModelRequest): ScriptedReply {
  if (request.lastMessage?.role === "tool") return { text: `results: ${request.toolResults.map((result) => result.text).join(" | ")}` };
  const user = request.lastUserText;
  if (user.includes("SLOW")) return { text: "slow answer", delayMs: 3_000 };
  const read = /read (\S+)/.exec(user);
  if (read) return { text: "Let me read it.", toolCalls: [{ name: "read_file", arguments: { path: read[1] } }] };
  // How many user turns the model has seen in this conversation: shows which conversation answered.
  const turns = request.messages.filter((message) => message.role === "user" && JSON.stringify(message.content).includes("turn-")).length;
  return { text: `${user} (user turns seen: ${turns})` };
}

let stack: BridgeStack;
let model: ScriptedModelServer;
let bridge: OpenAiBridge;
let clientA: OpenAI;
let clientB: OpenAI;

beforeAll(async () => {
  stack = await startBridgeStack(script, "openai-threads", { apiKeys: [KEY_A, KEY_B] });
  ({ model, bridge } = stack);
  clientA = stack.client(KEY_A);
  clientB = stack.client(KEY_B);
}, 60_000);

afterAll(() => stack?.stop());

/** One request: the answer's text, and the thread and conversation the bridge reported. */
async function ask(
  client: OpenAI,
  messages: ChatCompletionMessageParam[],
  options: { headers?: Record<string, string>; tools?: boolean } = {},
) {
  const { data, response } = await client.chat.completions
    .create({ model: "letta-code", messages, ...(options.tools ? { tools: [readFile] } : {}) }, { headers: options.headers })
    .withResponse();
  return {
    message: data.choices[0]!.message,
    text: data.choices[0]!.message.content ?? "",
    thread: response.headers.get("x-toolrelay-thread")!,
    conversation: response.headers.get("x-letta-conversation")!,
  };
}

describe("threads of the OpenAI chat bridge", () => {
  it("without a key, a request continues the thread whose transcript it begins with", async () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: "turn-1" },
    ];
    const one = await ask(clientA, messages);
    expect(one.text).toBe("turn-1 (user turns seen: 1)");
    // A client may rewrite its system message every time: it is not part of the match.
    messages[0] = { role: "system", content: "be brief, it is now later" };
    messages.push(one.message, { role: "user", content: "turn-2" });
    const two = await ask(clientA, messages);
    expect(two.text).toBe("turn-2 (user turns seen: 2)");
    expect(two.thread).toBe(one.thread);
    expect(two.conversation).toBe(one.conversation);
    // The changed system message reached the agent with that turn.
    const forwarded = model.requests.find((request) => request.lastUserText === "turn-2")!;
    expect(JSON.stringify(forwarded.lastMessage)).toContain("be brief, it is now later");
  });

  it("a second, unrelated client (another key) with the same first message gets its own thread, agent and tool calls", async () => {
    const first = [{ role: "user" as const, content: "read shared.txt" }];
    const a = await ask(clientA, first, { tools: true });
    const b = await ask(clientB, first, { tools: true });
    expect(b.thread).not.toBe(a.thread);
    expect(b.conversation).not.toBe(a.conversation);
    const threads = bridge.threads();
    const threadA = threads.find((thread) => thread.id === a.thread)!;
    const threadB = threads.find((thread) => thread.id === b.thread)!;
    expect(threadA.principal).not.toBe(threadB.principal);
    expect(threadA.agentId).not.toBe(threadB.agentId); // { create } agents are per key
    expect(b.message.tool_calls![0]!.id).not.toBe(a.message.tool_calls![0]!.id);
    // B replays A's transcript with A's call id: it is not A's thread, and A's call stays pending.
    const replay: ChatCompletionMessageParam[] = [
      ...first,
      a.message,
      { role: "tool", tool_call_id: a.message.tool_calls![0]!.id, content: "B-STOLE" },
    ];
    const stolen = await ask(clientB, replay, { tools: true });
    expect(stolen.thread).not.toBe(a.thread);
    expect(bridge.threads().find((thread) => thread.id === a.thread)!.waitingForTools).toBe(true);
    // A's own follow-up settles A's call.
    const own = await ask(clientA, [...first, a.message, { role: "tool", tool_call_id: a.message.tool_calls![0]!.id, content: "A-OWN" }], {
      tools: true,
    });
    expect(own.text).toBe("results: A-OWN");
    expect(own.thread).toBe(a.thread);
  });

  it("the same key, no thread key, a new conversation with the same opening: a new thread", async () => {
    const one = await ask(clientA, [{ role: "user", content: "turn-hello" }]);
    const two = await ask(clientA, [{ role: "user", content: "turn-hello" }]);
    expect(two.thread).not.toBe(one.thread);
    expect(two.text).toBe("turn-hello (user turns seen: 1)");
  });

  it("an explicit key (header or metadata) names the thread, even when the client edited the history", async () => {
    const headers = { "x-toolrelay-thread": "editor-session-7" };
    const one = await ask(clientA, [{ role: "user", content: "turn-k1" }], { headers });
    expect(one.thread).toBe("editor-session-7");
    const edited: ChatCompletionMessageParam[] = [
      { role: "user", content: "turn-k1 (edited)" },
      { role: "assistant", content: "something else" },
      { role: "user", content: "turn-k2" },
    ];
    const two = await ask(clientA, edited, { headers });
    expect(two.conversation).toBe(one.conversation);
    expect(two.text).toBe("turn-k2 (user turns seen: 2)");
    const viaMetadata = await clientA.chat.completions.create({
      model: "letta-code",
      messages: [{ role: "user", content: "turn-k3" }],
      metadata: { thread_id: "editor-session-7" },
    });
    expect(viaMetadata.choices[0]!.message.content).toBe("turn-k3 (user turns seen: 3)");
  });

  it("an edited history without a key starts a new conversation that gets the history as context", async () => {
    const one = await ask(clientA, [{ role: "user", content: "turn-e1" }]);
    const fork: ChatCompletionMessageParam[] = [
      { role: "user", content: "turn-e1" },
      { role: "assistant", content: "a reply the bridge never gave" },
      { role: "user", content: "turn-e2" },
    ];
    const two = await ask(clientA, fork);
    expect(two.conversation).not.toBe(one.conversation);
    const seeded = JSON.stringify(model.requests.find((request) => request.lastUserText === "turn-e2")!.lastMessage);
    expect(seeded).toContain("a reply the bridge never gave");
  });

  it("two requests for one thread at once: the second gets 409 thread_busy", async () => {
    const headers = { "x-toolrelay-thread": "busy-thread" };
    const slow = ask(clientA, [{ role: "user", content: "SLOW one" }], { headers });
    await vi.waitFor(() => expect(bridge.threads().find((thread) => thread.id === "busy-thread")?.busy).toBe(true), { timeout: 10_000 });
    await expect(ask(clientA, [{ role: "user", content: "turn-x" }], { headers })).rejects.toMatchObject({
      status: 409,
      code: "thread_busy",
    });
    expect((await slow).text).toBe("slow answer");
  });

  it("a client that goes away mid-stream stops the turn; the thread answers the next request", async () => {
    const headers = { "x-toolrelay-thread": "leaving-thread" };
    expect(await leaveMidStream(clientA, "SLOW leave", headers)).toEqual([null]); // only the opening chunk: the answer never finished
    await vi.waitFor(() => expect(bridge.threads().find((thread) => thread.id === "leaving-thread")?.busy).toBe(false), {
      timeout: 10_000,
    });
    const next = await ask(clientA, [{ role: "user", content: "turn-back" }], { headers });
    expect(next.text).toContain("turn-back");
    // The bridge told the runtime to stop the turn the client left (the abort_message itself is
    // asserted on the scripted runtime, test/openai/bridge-threads.test.ts). The real 0.32.18 does
    // not always take an abort (docs/protocol.md#abort: answered `aborted: false`, the turn runs on
    // to `end_turn`), so its history holds either the interruption ("The user interrupted the active
    // stream", the left message dropped) or the finished slow answer; either way that turn is over.
    const history = JSON.stringify(model.requests.find((request) => request.lastUserText === "turn-back")!.messages);
    expect(history.includes("interrupted") || history.includes("slow answer"), history.slice(-400)).toBe(true);
  });
});
