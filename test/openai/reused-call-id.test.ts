/**
 * A model that reuses a tool call id (`call_0` in every response, as some providers do) in one
 * turn, through the bridge on the scripted runtime: every new request of the runtime reaches the
 * chat client with its own arguments, and the client's answer to each is the one the runtime gets;
 * a re-delivery of the same request (same request_id) is answered once.
 * The same against the real app-server: integration/openai-reused-call-id-real-peer.test.ts.
 */
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAiBridge } from "../../packages/toolrelay/src/openai/index.js";
import { startScriptedRuntime, type ScriptedRuntime, type ScriptedTurn } from "../../packages/toolrelay/src/testing/index.js";

const readFile = {
  type: "function" as const,
  function: {
    name: "read_file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
};
/** What Letta Code 0.32.18 answers itself for a call whose required argument is missing (it never asks the client). */
const REFUSAL = "read_file tool missing required parameter: path. Received parameters: .";
const opened: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function setup(script: (turn: ScriptedTurn) => Promise<void>): Promise<{ runtime: ScriptedRuntime; client: OpenAI }> {
  const runtime = await startScriptedRuntime({ script });
  opened.push(runtime);
  const bridge = await startOpenAiBridge({
    backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
    agent: { create: { model: "scripted/test" } },
  });
  opened.push(bridge);
  return { runtime, client: new OpenAI({ apiKey: "unused", baseURL: bridge.url, maxRetries: 0 }) };
}

/**
 * Sends `messages` and answers every returned call with `answers[n]` (the n-th call returned in
 * this conversation), until the agent's answer. Returns the arguments of every call the client
 * was given, in order, with the bridge ids, and the agent's final text.
 */
async function converse(
  client: OpenAI,
  answers: readonly string[],
): Promise<{ calls: Array<{ id: string; arguments: string }>; text: string }> {
  const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "go" }];
  const calls: Array<{ id: string; arguments: string }> = [];
  for (let round = 0; round <= answers.length; round++) {
    const answer = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] }, { timeout: 10_000 });
    const choice = answer.choices[0]!;
    if (choice.finish_reason !== "tool_calls") return { calls, text: choice.message.content ?? "" };
    messages.push(choice.message);
    for (const call of choice.message.tool_calls ?? []) {
      if (call.type !== "function") throw new Error("not a function call");
      messages.push({ role: "tool", tool_call_id: call.id, content: answers[calls.length] ?? "no answer scripted" });
      calls.push({ id: call.id, arguments: call.function.arguments });
    }
  }
  throw new Error(`more calls than the ${answers.length} answers scripted`);
}

describe("a tool call id the model reuses in one turn", () => {
  it("after a call the runtime refused itself (never asking the client): the reusing call reaches the client with its own arguments", async () => {
    const { client, runtime } = await setup(async (turn) => {
      await turn.runBuiltinTool("read_file", {}, REFUSAL, { status: "error", stream: false, toolCallId: "call_0" });
      const fixed = await turn.callTool("read_file", { path: "a.txt" }, { toolCallId: "call_0" });
      await turn.say(`read: ${fixed.toolReturn}`);
    });
    const { calls, text } = await converse(client, ["A"]);
    expect(calls.map((call) => call.arguments)).toEqual(['{"path":"a.txt"}']);
    expect(text).toBe("read: A");
    expect(runtime.calls.map((call) => [call.toolCallId, call.result?.toolReturn])).toEqual([["call_0", "A"]]);
  });

  for (const second of [{ path: "a.txt" }, { path: "b.txt" }]) {
    const same = second.path === "a.txt";
    it(`in two consecutive responses with ${same ? "the same" : "other"} arguments: both reach the client, each answer reaches the runtime`, async () => {
      const { client, runtime } = await setup(async (turn) => {
        const one = await turn.callTool("read_file", { path: "a.txt" }, { toolCallId: "call_0" });
        const two = await turn.callTool("read_file", second, { toolCallId: "call_0" });
        await turn.say(`read: ${one.toolReturn} then ${two.toolReturn}`);
      });
      const { calls, text } = await converse(client, ["ONE", "TWO"]);
      expect(calls.map((call) => call.arguments)).toEqual(['{"path":"a.txt"}', JSON.stringify(second)]);
      expect(calls[0]!.id).not.toBe(calls[1]!.id);
      expect(text).toBe("read: ONE then TWO");
      const requests = runtime.calls.map((call) => [call.toolCallId, call.result?.toolReturn]);
      expect(requests).toEqual([
        ["call_0", "ONE"],
        ["call_0", "TWO"],
      ]);
      expect(runtime.calls[0]!.requestId).not.toBe(runtime.calls[1]!.requestId);
    });
  }

  it("a re-delivery of the same request (its request_id too, as a relay re-offers one) is answered once and never reaches the client again", async () => {
    const { client, runtime } = await setup(async (turn) => {
      const one = await turn.callTool("read_file", { path: "a.txt" }, { toolCallId: "call_0" });
      const again = await turn.redeliverToolCall("call_0");
      await turn.say(`read: ${one.toolReturn}; again: ${again.toolReturn}`);
    });
    const { calls, text } = await converse(client, ["A", "a second answer the client must not be asked for"]);
    expect(calls.map((call) => call.arguments)).toEqual(['{"path":"a.txt"}']);
    expect(text).toBe("read: A; again: A");
    expect(runtime.calls).toHaveLength(1);
    const responses = runtime.frames.filter((frame) => frame.type === "external_tool_call_response");
    expect(responses.map((record) => (record.frame as { request_id?: unknown }).request_id)).toEqual([runtime.calls[0]!.requestId]);
    // The runtime did write the request twice.
    const requests = runtime.sentFrames.filter((record) => record.type === "external_tool_call_request");
    expect(requests.map((record) => (record.frame as { request_id?: unknown }).request_id)).toEqual([
      runtime.calls[0]!.requestId,
      runtime.calls[0]!.requestId,
    ]);
  });
});
