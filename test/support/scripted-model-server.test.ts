import { afterEach, describe, expect, it } from "vitest";
import { startScriptedModelServer, type ScriptedModelServer } from "./scripted-model-server.js";

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function chat(url: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
}

/** Parses an SSE body into its `data:` payloads. */
function sseData(text: string): string[] {
  return text
    .split("\n\n")
    .filter((event) => event.startsWith("data: "))
    .map((event) => event.slice("data: ".length));
}

describe("scripted model server", () => {
  it("lists one model and 404s /props", async () => {
    server = await startScriptedModelServer({ modelId: "m1" });
    expect(server.modelHandle).toBe("llama.cpp/m1");
    const models = await (await fetch(`${server.url}/models`)).json();
    expect(models).toMatchObject({ data: [{ id: "m1" }] });
    expect((await fetch(`http://127.0.0.1:${server.port}/props`)).status).toBe(404);
  });

  it("streams text by default ('pong') and records the request", async () => {
    server = await startScriptedModelServer();
    const response = await chat(server.url, {
      model: "scripted-model",
      stream: true,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>x</system-reminder>" },
            { type: "text", text: "hi" },
          ],
        },
      ],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = sseData(await response.text());
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? "").join("")).toBe("pong");
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ stream: true, toolNames: ["get_weather"], lastUserText: "hi" });
  });

  it("streams several tool calls and answers a tool result with 'done: …'", async () => {
    server = await startScriptedModelServer({
      script: (request) =>
        request.lastMessage?.role === "tool"
          ? { text: `done: ${request.toolResults.map((result) => result.text).join(",")}` }
          : {
              toolCalls: [
                { name: "a", arguments: { x: 1 } },
                { id: "fixed", name: "b", arguments: {} },
              ],
            },
    });
    const first = sseData(await (await chat(server.url, { stream: true, messages: [{ role: "user", content: "go" }] })).text());
    const deltas = first.slice(0, -1).map((event) => JSON.parse(event).choices[0]);
    const calls = new Map<number, { id?: string; name?: string; arguments: string }>();
    for (const choice of deltas) {
      for (const part of choice.delta.tool_calls ?? []) {
        const call = calls.get(part.index) ?? { arguments: "" };
        call.id ??= part.id;
        call.name ??= part.function?.name;
        call.arguments += part.function?.arguments ?? "";
        calls.set(part.index, call);
      }
    }
    expect([...calls.values()]).toEqual([
      { id: expect.stringMatching(/^call_/), name: "a", arguments: '{"x":1}' },
      { id: "fixed", name: "b", arguments: "{}" },
    ]);
    expect(deltas.at(-1).finish_reason).toBe("tool_calls");

    server.resetScript();
    const second = await chat(server.url, {
      stream: false,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ id: "fixed", type: "function", function: { name: "b", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "fixed", content: "42" },
      ],
    });
    expect(await second.json()).toMatchObject({
      choices: [{ message: { role: "assistant", content: "done: 42" }, finish_reason: "stop" }],
    });
    expect(server.requests[1]!.toolResults).toEqual([expect.objectContaining({ toolCallId: "fixed", text: "42" })]);
  });

  it("answers a scripted HTTP error", async () => {
    server = await startScriptedModelServer({ script: () => ({ httpError: { status: 503, message: "overloaded" } }) });
    const response = await chat(server.url, { stream: true, messages: [] });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ error: { message: "overloaded" } });
  });

  it("waitForRequest resolves on a later request and rejects at its deadline", async () => {
    server = await startScriptedModelServer();
    const waiting = server.waitForRequest((request) => request.lastUserText === "second", { timeoutMs: 5_000 });
    await chat(server.url, { messages: [{ role: "user", content: "first" }] });
    await chat(server.url, { messages: [{ role: "user", content: "second" }] });
    await expect(waiting).resolves.toMatchObject({ index: 1 });
    await expect(server.waitForRequest(() => false, { timeoutMs: 50 })).rejects.toThrow(/no matching request within 50 ms/);
  });
});
