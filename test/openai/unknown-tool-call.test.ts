/**
 * A `role: "tool"` message whose `tool_call_id` names no call of the assistant message before it
 * is refused with a 400 before anything reaches the thread, as the OpenAI API refuses it: the
 * pending call stays pending (the turn is not stopped, the agent is told nothing), and the
 * client's corrected request settles it. Through the `openai` client and raw HTTP, on the
 * scripted runtime (`toolrelay/testing`).
 */
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import { startOpenAiBridge, type OpenAiBridge } from "../../packages/toolrelay/src/openai/index.js";
import { startScriptedRuntime, type ScriptedRuntime, type ScriptedTurn } from "../../packages/toolrelay/src/testing/index.js";

const readFile = {
  type: "function" as const,
  function: { name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } },
};
const opened: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function script(turn: ScriptedTurn): Promise<void> {
  const text = turn.userText.split("\n").at(-1)!;
  if (text.startsWith("read")) {
    const result = await turn.callTool("read_file", { path: "a" });
    await turn.say(`read: ${result.toolReturn}`);
    return;
  }
  await turn.say(`echo: ${text}`);
}

async function setup(): Promise<{ runtime: ScriptedRuntime; bridge: OpenAiBridge; client: OpenAI }> {
  const runtime = await startScriptedRuntime({ script });
  opened.push(runtime);
  const bridge = await startOpenAiBridge({
    backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
    agent: { create: { model: "scripted/test" } },
  });
  opened.push(bridge);
  return { runtime, bridge, client: new OpenAI({ apiKey: "unused", baseURL: bridge.url, maxRetries: 0 }) };
}

const frameTypes = (runtime: ScriptedRuntime, type: string) => runtime.frames.filter((frame) => frame.type === type).length;

describe("a tool message for a call that was never made", () => {
  it("is refused 400 unknown_tool_call, and the pending call stays pending until the corrected request settles it", async () => {
    const { runtime, bridge, client } = await setup();
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "read a" }];
    const first = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] });
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const call = first.choices[0]!.message.tool_calls![0]!;
    messages.push(first.choices[0]!.message);
    const inputsBefore = frameTypes(runtime, "input");

    const wrong = client.chat.completions.create({
      model: "letta-code",
      messages: [...messages, { role: "tool", tool_call_id: "call_never_made", content: "A" }],
      tools: [readFile],
    });
    await expect(wrong).rejects.toMatchObject({
      status: 400,
      type: "invalid_request_error",
      code: "unknown_tool_call",
      param: "messages.2.tool_call_id",
      message: expect.stringContaining(`"call_never_made"`),
    });
    await expect(wrong).rejects.toMatchObject({ message: expect.stringContaining(call.id) });

    // Nothing reached the thread: its call waits, its turn runs, the agent was sent nothing.
    expect(runtime.calls.map((record) => record.status)).toEqual(["pending"]);
    expect(bridge.threads()).toMatchObject([{ busy: false, waitingForTools: true }]);
    expect(frameTypes(runtime, "abort_message")).toBe(0);
    expect(frameTypes(runtime, "input")).toBe(inputsBefore);

    const corrected = await client.chat.completions.create({
      model: "letta-code",
      messages: [...messages, { role: "tool", tool_call_id: call.id, content: "A" }],
      tools: [readFile],
    });
    expect(corrected.choices[0]!.message.content).toBe("read: A");
    expect(runtime.calls.map((record) => [record.status, record.result?.toolReturn])).toEqual([["answered", "A"]]);
  });

  it("the error body is OpenAI's shape, for a tool message with no assistant message before it too (and no thread is opened)", async () => {
    const { bridge } = await setup();
    const post = (messages: unknown[]) =>
      fetch(`${bridge.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "letta-code", messages }),
      });
    const lone = await post([
      { role: "user", content: "hi" },
      { role: "tool", tool_call_id: "call_x", content: "A" },
    ]);
    expect(lone.status).toBe(400);
    expect(await lone.json()).toEqual({
      error: {
        message: expect.stringContaining("no assistant message with tool_calls before it"),
        type: "invalid_request_error",
        code: "unknown_tool_call",
        param: "messages.1.tool_call_id",
      },
    });
    const other = await post([
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_a", type: "function", function: { name: "read_file", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_a", content: "A" },
      { role: "tool", tool_call_id: "call_b", content: "B" },
    ]);
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ error: { code: "unknown_tool_call", param: "messages.3.tool_call_id" } });
    expect(bridge.threads()).toEqual([]);
  });
});
