/**
 * A chat client that declares a tool named like one of the runtime's own tools (`Read`, `Bash`,
 * ...): it asked for that tool by name and runs it itself, so the bridge registers it with
 * `overridesRuntimeTool: true` and it replaces the runtime's tool for the thread, instead of the
 * request being refused with `400 invalid_tool` (`RESERVED_TOOL_NAME` from `defineTool`).
 * The same against the real app-server: integration/openai-real-peer.test.ts.
 */
import OpenAI from "openai";
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import { ClientToolSet } from "../../packages/toolrelay/src/openai/client-tool-set.js";
import { startOpenAiBridge } from "../../packages/toolrelay/src/openai/index.js";
import { startScriptedRuntime, type ScriptedVisibleTool } from "../../packages/toolrelay/src/testing/index.js";

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

const parameters = { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] };

describe("ClientToolSet and the runtime's own tool names", () => {
  it("offers a declared Read and Bash (each replacing the runtime's), not a 400 invalid_tool", () => {
    const set = new ClientToolSet(async () => "unused", 1_000);
    expect(
      set.update([
        { name: "Read", declaredName: "Read", description: "The client's Read", parameters },
        { name: "Bash", declaredName: "functions.Bash", description: undefined, parameters: { properties: {} } },
      ]),
    ).toBe(true);
    expect(set.declared.map((tool) => tool.name)).toEqual(["Read", "Bash"]);
  });

  it("still refuses what cannot be offered, naming the tool", () => {
    const set = new ClientToolSet(async () => "unused", 1_000);
    expect(() => set.update([{ name: "Read", declaredName: "Read", description: "x", parameters: { type: "string" } }])).toThrow(
      /tools\[0\] \("Read"\) cannot be offered/,
    );
  });
});

describe("the bridge on the scripted runtime", () => {
  it("a client's Read is registered in place of the runtime's, and the model's Read call goes back to the client", async () => {
    let visible: readonly ScriptedVisibleTool[] = [];
    const runtime = await startScriptedRuntime({
      script: async (turn) => {
        visible = turn.tools;
        const result = await turn.callTool("Read", { file_path: "notes.txt" });
        await turn.say(`read: ${result.toolReturn}`);
      },
    });
    opened.push(runtime);
    const bridge = await startOpenAiBridge({
      backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
      agent: { create: { model: "scripted/test" } },
    });
    opened.push(bridge);
    const client = new OpenAI({ apiKey: "unused", baseURL: bridge.url, maxRetries: 0 });
    const read: ChatCompletionFunctionTool = {
      type: "function",
      function: { name: "Read", description: "CLIENT-READ: reads from the editor's buffers", parameters },
    };

    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "read notes.txt" }];
    const first = await client.chat.completions.create({ model: "letta-code", messages, tools: [read] }, { timeout: 10_000 });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    const call = choice.message.tool_calls![0]!;
    if (call.type !== "function") throw new Error("not a function call");
    expect(call.function.name).toBe("Read");
    expect(JSON.parse(call.function.arguments)).toEqual({ file_path: "notes.txt" });
    expect(visible.filter((tool) => tool.name === "Read")).toEqual([
      expect.objectContaining({ name: "Read", description: "CLIENT-READ: reads from the editor's buffers" }),
    ]);

    messages.push(choice.message, { role: "tool", tool_call_id: call.id, content: "buy milk" });
    const second = await client.chat.completions.create({ model: "letta-code", messages, tools: [read] }, { timeout: 10_000 });
    expect(second.choices[0]!.message.content).toBe("read: buy milk");
    expect(runtime.calls.map((entry) => [entry.toolName, entry.result?.toolReturn])).toEqual([["Read", "buy milk"]]);
  });
});
