/**
 * A client tool's `tool-result` event reports what the SDK sent the model, against the REAL Letta
 * Code app-server (0.32.18, local backend) and a scripted model that records what it received. The
 * runtime's own copy of a result (its `tool_return_message`) is cut to 30,000 characters with a
 * notice of its own, and shows an image-only result as JSON with the base64 data.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Session, type TurnEvent } from "../packages/toolrelay/src/index.js";
import { createSessionOnLink } from "../packages/toolrelay/src/session/create-session.js";
import type { LinkSessionOptions } from "../packages/toolrelay/src/session/session-options.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ModelRequest, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const sessions: Session[] = [];

beforeAll(async () => {
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await server?.stop();
  await model?.close();
});

beforeEach(() => {
  model.resetScript();
});

async function open(options: Partial<LinkSessionOptions>): Promise<Session> {
  const session = await createSessionOnLink({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-tool-result-text" } },
    ...options,
  });
  sessions.push(session);
  return session;
}

function callOnce(name: string) {
  return (request: ModelRequest) => {
    if (request.lastMessage?.role === "tool") return { text: "done" };
    return { toolCalls: [{ name, arguments: {} }] };
  };
}

function toolResultOf(events: readonly TurnEvent[]): Extract<TurnEvent, { type: "tool-result" }> {
  const results = events.filter((event): event is Extract<TurnEvent, { type: "tool-result" }> => event.type === "tool-result");
  expect(results).toHaveLength(1);
  return results[0]!;
}

/** 40,000 characters whose head and tail differ: every line says where it is. */
const LONG = Array.from({ length: 4_000 }, (_, line) => `line ${String(line).padStart(4, "0")}`).join("\n");
/** A 1×1 PNG. */
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describe("a client tool's tool-result event is what the model received (real app-server)", () => {
  it("a 40,000-character result: the model's text, with the SDK's one notice and not the runtime's second", async () => {
    expect(LONG.length).toBeGreaterThan(40_000 - 4_000);
    const long = defineTool({ name: "long_report", description: "A long report", inputSchema: z.object({}), execute: () => LONG });
    model.setScript(callOnce("long_report"));
    const session = await open({ tools: [long] });
    const from = model.requests.length;
    const result = await session.send("report").result;

    const followUp = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!;
    const received = followUp.toolResults[0]!.text;
    // The model got the SDK's clamp: head and tail of the report, one notice.
    expect(received.length).toBeLessThanOrEqual(32_000);
    expect(received.startsWith("line 0000\n")).toBe(true);
    expect(received).toContain("line 3999");
    expect(received.match(/\[Output truncated/g)).toHaveLength(1);

    const event = toolResultOf(result.events);
    expect(event).toMatchObject({ toolName: "long_report", owner: "client", isError: false });
    expect(event.text).toBe(received);
    expect(event.text.match(/\[Output truncated/g)).toHaveLength(1);
    expect(event.text).not.toContain("Full output written to");
  });

  it("an image-only result: the event says it is an image, with no base64 in it", async () => {
    const picture = defineTool({
      name: "take_picture",
      description: "Takes a picture",
      inputSchema: z.object({}),
      execute: () => [{ type: "image" as const, data: PIXEL, mimeType: "image/png" }],
    });
    model.setScript(callOnce("take_picture"));
    const session = await open({ tools: [picture] });
    const from = model.requests.length;
    const result = await session.send("picture").result;

    const event = toolResultOf(result.events);
    expect(event).toMatchObject({ toolName: "take_picture", owner: "client", isError: false });
    expect(event.text).toBe(`[image: image/png, ${Buffer.from(PIXEL, "base64").length} bytes]`);
    expect(event.text).not.toContain(PIXEL.slice(0, 16));
    // The model did get the call's answer (this model reports no vision: the runtime says so in its place).
    const followUp = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!;
    expect(followUp.toolResults).toHaveLength(1);
    expect(JSON.stringify(followUp.toolResults[0]!.message)).not.toContain(PIXEL.slice(0, 16));
  });

  it("a short text result and a thrown error are the model's text too", async () => {
    const echo = defineTool({ name: "echo_back", description: "Echoes", inputSchema: z.object({}), execute: () => "short answer" });
    const failing = defineTool({
      name: "always_fails",
      description: "Fails",
      inputSchema: z.object({}),
      execute: () => {
        throw new Error("the disk is full");
      },
    });
    const session = await open({ tools: [echo, failing] });
    for (const [name, isError] of [
      ["echo_back", false],
      ["always_fails", true],
    ] as const) {
      model.setScript(callOnce(name));
      const from = model.requests.length;
      const result = await session.send(`call ${name}`).result;
      const received = model.requests.slice(from).find((request) => request.lastMessage?.role === "tool")!.toolResults[0]!.text;
      expect(toolResultOf(result.events)).toMatchObject({ toolName: name, isError, text: received });
    }
  });
});
