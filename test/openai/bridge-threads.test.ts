/**
 * The bridge's thread bounds and failure paths, on the scripted runtime (`toolrelay/testing`) for
 * speed: too many threads (429), the least recently used idle thread replaced, idle threads
 * expired, a turn that fails (JSON and mid-stream), a session whose link is gone. The behaviours
 * the bridge relies on from the runtime itself are checked against the real one in
 * integration/openai-*.test.ts.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startOpenAiBridge, type OpenAiBridge, type OpenAiBridgeOptions } from "../../packages/toolrelay/src/openai/index.js";
import { startScriptedRuntime, type ScriptedRuntime, type ScriptedTurn } from "../../packages/toolrelay/src/testing/index.js";
import { leaveMidStream } from "../support/leave-mid-stream.js";

const readFile = {
  type: "function" as const,
  function: { name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } },
};
const opened: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function script(turn: ScriptedTurn): Promise<void> {
  // The user's own text is the last part (the bridge's nudge comes before it).
  const text = turn.userText.split("\n").at(-1)!;
  if (text.includes("FAIL")) turn.fail("the model exploded");
  if (text.includes("SLOW")) await new Promise((resolve) => setTimeout(resolve, 400));
  if (text.startsWith("read")) {
    const result = await turn.callTool("read_file", { path: "a" });
    await turn.say(`read: ${result.toolReturn}`);
    return;
  }
  await turn.say(`echo: ${text}`);
}

async function setup(
  options: Partial<OpenAiBridgeOptions> = {},
): Promise<{ runtime: ScriptedRuntime; bridge: OpenAiBridge; client: OpenAI }> {
  const runtime = await startScriptedRuntime({ script });
  opened.push(runtime);
  const bridge = await startOpenAiBridge({
    backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 },
    agent: { create: { model: "scripted/test" } },
    ...options,
  });
  opened.push(bridge);
  return { runtime, bridge, client: new OpenAI({ apiKey: "unused", baseURL: bridge.url, maxRetries: 0 }) };
}

const ask = (client: OpenAI, content: string, stream = false) =>
  stream
    ? client.chat.completions
        .stream({ model: "letta-code", messages: [{ role: "user", content }], tools: [readFile] })
        .finalChatCompletion()
    : client.chat.completions.create({ model: "letta-code", messages: [{ role: "user", content }], tools: [readFile] });

describe("thread bounds", () => {
  it("past maxThreads with none idle: 429; once one is idle, the least recently used is replaced", async () => {
    const { bridge, client } = await setup({ maxThreads: 1 });
    const first = await ask(client, "read a");
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    await expect(ask(client, "another conversation")).rejects.toMatchObject({ status: 429, code: "too_many_threads" });
    const call = first.choices[0]!.message.tool_calls![0]!;
    const done = await client.chat.completions.create({
      model: "letta-code",
      messages: [{ role: "user", content: "read a" }, first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "A" }],
      tools: [readFile],
    });
    expect(done.choices[0]!.message.content).toBe("read: A");
    const before = bridge.threads().map((thread) => thread.id);
    const third = await ask(client, "a third conversation");
    expect(third.choices[0]!.message.content).toBe("echo: a third conversation");
    const after = bridge.threads();
    expect(after).toHaveLength(1);
    expect(after[0]!.id).not.toBe(before[0]);
  });

  it("an idle thread is closed after threadIdleMs; one waiting for tool results is not", async () => {
    const { bridge, client, runtime } = await setup({ threadIdleMs: 200 });
    await ask(client, "hello");
    const waiting = await ask(client, "read a");
    expect(waiting.choices[0]!.finish_reason).toBe("tool_calls");
    await vi.waitFor(() => expect(bridge.threads()).toHaveLength(1), { timeout: 5_000 });
    expect(bridge.threads()[0]!.waitingForTools).toBe(true);
    expect(runtime.calls.filter((call) => call.status === "pending")).toHaveLength(1);
  });
});

describe("streaming", () => {
  it("a silent stream gets SSE keep-alive comments, which the openai client skips", async () => {
    const { bridge, client } = await setup({ keepAliveMs: 50 });
    const response = await fetch(`${bridge.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "letta-code", stream: true, messages: [{ role: "user", content: "SLOW raw" }] }),
    });
    const body = await response.text();
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(body).toContain(": keep-alive\n\n");
    expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const streamed = await client.chat.completions
      .stream({ model: "letta-code", messages: [{ role: "user", content: "SLOW client" }] })
      .finalChatCompletion();
    expect(streamed.choices[0]!.message.content).toBe("echo: SLOW client");
  });
});

describe("a client that goes away", () => {
  it("mid-stream: the bridge writes abort_message for the thread's turn, and the thread answers the next request", async () => {
    const { bridge, client, runtime } = await setup();
    const headers = { "x-toolrelay-thread": "leaving" };
    expect(await leaveMidStream(client, "SLOW leave", headers)).toEqual([null]);
    await vi.waitFor(() => expect(runtime.frames.filter((frame) => frame.type === "abort_message")).toHaveLength(1), { timeout: 5_000 });
    await vi.waitFor(() => expect(bridge.threads().find((thread) => thread.id === "leaving")?.busy).toBe(false), { timeout: 5_000 });
    const next = await client.chat.completions.create(
      { model: "letta-code", messages: [{ role: "user", content: "turn-back" }] },
      { headers },
    );
    expect(next.choices[0]!.message.content).toBe("echo: turn-back");
  });

  it("mid-stream, with the next request sent at once: no 409 while the left turn stops; the next request gets its own answer", async () => {
    const { bridge, client, runtime } = await setup();
    const headers = { "x-toolrelay-thread": "leaving-at-once" };
    // A first answer: the client keeps a keep-alive connection, which carries the next request at
    // once (it may be read before the server sees the left stream's connection close).
    const first = await client.chat.completions.create(
      { model: "letta-code", messages: [{ role: "user", content: "turn-1" }] },
      { headers },
    );
    expect(first.choices[0]!.message.content).toBe("echo: turn-1");
    // The SLOW script runs on for 400 ms after the abort: the left turn ends only then.
    expect(await leaveMidStream(client, "SLOW leave", headers)).toEqual([null]);
    const next = await client.chat.completions.create(
      { model: "letta-code", messages: [{ role: "user", content: "turn-back" }] },
      { headers, timeout: 10_000 },
    );
    expect(next.choices[0]!.message.content).toBe("echo: turn-back");
    expect(runtime.frames.filter((frame) => frame.type === "abort_message")).toHaveLength(1);
    expect(bridge.threads().find((thread) => thread.id === "leaving-at-once")).toMatchObject({ busy: false, waitingForTools: false });
  });
});

describe("failures", () => {
  it("a turn that ends in an error: 502 upstream_error (JSON), an error event the openai client throws (stream)", async () => {
    const { client } = await setup();
    await expect(ask(client, "FAIL now")).rejects.toMatchObject({
      status: 502,
      code: "upstream_error",
      message: expect.stringContaining("the model exploded"),
    });
    await expect(ask(client, "FAIL streaming", true)).rejects.toMatchObject({
      code: "upstream_error",
      message: expect.stringContaining("the model exploded"),
    });
  });

  it("a thread whose runtime went away: 502 saying so, and the thread is free for the next request", async () => {
    const { client, runtime, bridge } = await setup();
    const first = await ask(client, "hello");
    expect(first.choices[0]!.message.content).toBe("echo: hello");
    await runtime.close();
    opened.splice(opened.indexOf(runtime), 1);
    const next = client.chat.completions.create({
      model: "letta-code",
      messages: [{ role: "user", content: "hello" }, first.choices[0]!.message, { role: "user", content: "again" }],
    });
    await expect(next).rejects.toMatchObject({
      status: 502,
      code: "upstream_error",
      message: expect.stringMatching(/the runtime did not take the new tool set: .*(socket|link|connection|closed)/i),
    });
    expect(bridge.threads().map((thread) => thread.busy)).toEqual([false]);
  });
});
