/**
 * What a sidecar `send` and a host tool become for the model, against the REAL Letta Code
 * app-server (0.32.18) with a scripted model, through the `toolrelay-sidecar` executable:
 * - an image part (`source: { type: "base64", media_type, data }`, docs/sidecar.md, "Images in a
 *   message") reaches the model's request as an image;
 * - `turn_end.text` is the turn's assistant texts joined with no separator, each message's pieces
 *   told apart by the `message_id` of its `assistant` events;
 * - a tool's annotations (hints) never reach the model: it is offered name, description and
 *   parameters only (docs/tools.md, "Annotations and timeouts").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../test/support/scripted-model-server.js";
import { spawnSidecarProcess, type SidecarProcess } from "../test/sidecar/support/sidecar-process.js";

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const echo = {
  name: "echo",
  description: "Echoes its input",
  input_schema: { type: "object", properties: { text: { type: "string" } } },
  annotations: { title: "Echo", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
};

let model: ScriptedModelServer;
let server: LettaAppServer;
let sidecar: SidecarProcess;

beforeAll(async () => {
  // A model that takes images (llama.cpp's /props says so), as a vision model's server would.
  model = await startScriptedModelServer({ vision: true });
  server = await startLettaAppServer({ modelUrl: model.url });
  sidecar = spawnSidecarProcess();
  await sidecar.host.greet();
  await sidecar.host.open("s", server.url, [echo], { agent: { create: { model: model.modelHandle } } });
  sidecar.host.answerCalls((call) => ({ type: "tool_result", content: [{ type: "text", text: JSON.stringify(call.input) }] }));
}, 90_000);

afterAll(async () => {
  if (sidecar) {
    sidecar.host.send({ type: "shutdown" });
    await Promise.race([sidecar.exited, new Promise((resolve) => setTimeout(resolve, 3_000))]);
    sidecar.kill();
  }
  await server?.stop();
  await model?.close();
});

describe("a sidecar send, as the real app-server hands it to the model", () => {
  it("an image part with a base64 source reaches the model's request as an image", async () => {
    model.setScript(() => ({ text: "I see it." }));
    const from = model.requests.length;
    sidecar.host.send({
      type: "send",
      session: "s",
      turn: "image",
      message: [
        { type: "text", text: "What is in this picture?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      ],
    });
    expect(await sidecar.host.next({ type: "turn_end", turn: "image" }, { timeoutMs: 30_000 })).toMatchObject({
      fault: "ok",
      text: "I see it.",
    });
    const request = model.requests.slice(from).at(-1)!;
    const user = [...request.messages].reverse().find((message) => message.role === "user")!;
    expect(JSON.stringify(user.content)).toContain("What is in this picture?");
    const parts = user.content as Array<{ type: string; image_url?: { url: string } }>;
    const image = parts.find((part) => part.type === "image_url");
    expect(image?.image_url?.url).toMatch(/^data:image\/png;base64,/);
  }, 60_000);

  it("turn_end.text joins the turn's assistant messages with no separator; their events carry each message's id", async () => {
    model.setScript((request) =>
      request.lastMessage?.role === "tool"
        ? { text: "It says hi." }
        : { text: "Let me look.", toolCalls: [{ name: "echo", arguments: { text: "hi" } }] },
    );
    const from = sidecar.host.frames.length;
    sidecar.host.send({ type: "send", session: "s", turn: "joined", message: "look" });
    const end = await sidecar.host.next({ type: "turn_end", turn: "joined" }, { from, timeoutMs: 30_000 });
    expect(end).toMatchObject({ fault: "ok", text: "Let me look.It says hi." });
    const pieces = sidecar.host.frames
      .slice(from)
      .filter((frame) => frame.type === "turn_event" && (frame.event as { kind: string }).kind === "assistant")
      .map((frame) => frame.event as { text: string; message_id: string | null });
    const byMessage = new Map<string | null, string>();
    for (const piece of pieces) byMessage.set(piece.message_id, (byMessage.get(piece.message_id) ?? "") + piece.text);
    expect([...byMessage.values()]).toEqual(["Let me look.", "It says hi."]);
    expect(pieces.map((piece) => piece.text).join("")).toBe(end.text);
  }, 60_000);

  it("the tool's annotations never reach the model: it is offered name, description and parameters", async () => {
    model.setScript(() => ({ text: "ok" }));
    const from = model.requests.length;
    sidecar.host.send({ type: "send", session: "s", turn: "tools", message: "hello" });
    await sidecar.host.next({ type: "turn_end", turn: "tools" }, { timeoutMs: 30_000 });
    const request = model.requests[from]!;
    const offered = request.tools.find((tool) => tool.function.name === "echo")!;
    expect(offered).toEqual({
      type: "function",
      function: { name: "echo", description: "Echoes its input", parameters: expect.objectContaining({ type: "object" }) },
    });
    expect(JSON.stringify(request.body)).not.toMatch(/readOnlyHint|idempotentHint|openWorldHint/);
  }, 60_000);
});
