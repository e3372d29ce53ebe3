/**
 * A failing turn against the REAL Letta Code app-server (0.32.18): one failure is one `error`
 * event with readable text (never the runtime's JSON document of it), the runtime's error class and
 * run in their own fields, and `TurnResult.error` the same text. The runtime reports each failed run
 * as a `loop_error` (its message a JSON document, `api_error` the structured copy), an
 * `error_message`, the `turn_finished` error (the JSON document) and a terminal `loop_error`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type TurnEvent } from "../packages/toolrelay/src/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

describe("runtime errors through the real app-server", () => {
  let model: ScriptedModelServer;
  let peer: LettaAppServer;
  const sessions: Session[] = [];

  beforeAll(async () => {
    model = await startScriptedModelServer({
      script: (request) =>
        request.lastUserText.includes("EXPLODE") ? { httpError: { status: 500, message: "model exploded" } } : { text: "pong" },
    });
    peer = await startLettaAppServer({ modelUrl: model.url });
  }, 60_000);
  afterAll(async () => {
    for (const session of sessions) await session.close();
    await peer?.stop();
    await model?.close();
  });

  async function open(modelHandle: string): Promise<Session> {
    const session = await createSession({
      backend: { kind: "local", url: peer.url },
      agent: { create: { model: modelHandle, name: "toolrelay-runtime-errors" } },
    });
    sessions.push(session);
    return session;
  }

  it("a model handle the local backend cannot serve: one error event, readable, and the result's error is its message", async () => {
    const session = await open("llama.cpp/no-such-model");
    const iterated: TurnEvent[] = [];
    const turn = session.send("hello");
    for await (const event of turn) iterated.push(event);
    const result = await turn.result;
    const errors = iterated.filter((event) => event.type === "error");
    expect(errors).toEqual([
      {
        type: "error",
        message: 'Unknown model "no-such-model" for provider "llama-cpp". Choose an available model with /model.',
        errorType: "llm_error",
        runId: expect.any(String),
      },
    ]);
    expect(result.events.filter((event) => event.type === "error")).toEqual(errors);
    expect(result.stopReason).toBe("error");
    expect(result.error).toBe('Unknown model "no-such-model" for provider "llama-cpp". Choose an available model with /model.');
  });

  it("a model server that answers 500: one error event per failed run (the runtime retries the run), none of them a JSON document", async () => {
    const session = await open(model.modelHandle);
    const result = await session.send("EXPLODE please").result;
    const errors = result.events.flatMap((event) => (event.type === "error" ? [event] : []));
    expect(errors.length).toBeGreaterThan(0);
    const runs = errors.map((error) => error.runId);
    expect(new Set(runs).size).toBe(errors.length); // never two events for one run
    for (const error of errors) {
      expect(error.message).toBe('500: {"message":"model exploded","type":"server_error"}');
      expect(error.message.trimStart().startsWith("{")).toBe(false);
      expect(error.errorType).toBe("llm_error");
    }
    expect(result.stopReason).toBe("llm_api_error");
    expect(result.error).toBe('500: {"message":"model exploded","type":"server_error"}');
  }, 90_000);

  it("an agent, a conversation or an address path the local server does not have is NOT_FOUND, as on the cloud backend", async () => {
    const agent = "agent-00000000-0000-4000-8000-000000000000";
    await expect(createSession({ backend: { kind: "local", url: peer.url }, agent: { id: agent } })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: `the runtime refused runtime_start: Agent ${agent} not found`,
      details: { agentId: agent },
    });
    const session = await open(model.modelHandle);
    await expect(
      createSession({ backend: { kind: "local", url: peer.url }, agent: { id: session.agentId }, conversation: "local-conv-99" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND", details: { conversationId: "local-conv-99" } });
    await expect(
      createSession({ backend: { kind: "local", url: peer.url.replace(/\/ws$/, "/nope") }, agent: { id: session.agentId } }),
    ).rejects.toMatchObject({ code: "NOT_FOUND", details: { status: 404 } });
  });
});
