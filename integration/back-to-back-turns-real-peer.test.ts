/**
 * Turns sent back to back in the default mode (strict) against the REAL app-server 0.32.18. In
 * every mode but `unrestricted` the runtime asks `can_use_tool` about each client tool call; when a
 * turn's input follows the previous turn's end within the runtime's cleanup window (100–200 ms
 * measured), the runtime drops the conversation's object while the new turn runs on it, answers
 * the session's "allow" with "Approval request is no longer pending", and the turn never ends.
 * The session keeps a gap (`turnGapMs`, default 1,000 ms) before each next input: with it, a text
 * turn followed at once by a tool turn ends, over several rounds, for client and runtime tools.
 * (With `turnGapMs: 0` the second turn hung in 4 of 4 runs here: the guard's control, run by hand.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSession, defineTool, type Session } from "../packages/toolrelay/src/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import { startScriptedModelServer, type ScriptedModelServer } from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
const sessions: Session[] = [];

beforeAll(async () => {
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
}, 90_000);

afterAll(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await server?.stop();
  await model?.close();
});

const echo = defineTool({
  name: "echo",
  description: "Echoes its text",
  inputSchema: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

/** A turn's result, or a failure naming the turn when it does not end within 20 s. */
async function ended<T>(result: Promise<T>, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not end within 20 s`)), 20_000);
  });
  try {
    return await Promise.race([result, hung]);
  } finally {
    clearTimeout(timer);
  }
}

describe("turns back to back in the default mode (real app-server)", () => {
  it("text, then at once a client tool call, three rounds: every turn ends with its text", async () => {
    const session = await createSession({
      backend: { kind: "local", url: server.url },
      agent: { create: { model: model.modelHandle, name: "toolrelay-back-to-back" } },
      tools: [echo],
    });
    sessions.push(session);
    const ran: string[] = [];
    session.on("tool-call-end", (event) => ran.push(`${event.toolName}:${event.outcome}`));
    for (const round of [1, 2, 3]) {
      model.setScript(() => ({ text: `hello ${round}` }));
      const first = await ended(session.send(`say hello ${round}`).result, `round ${round}, the text turn`);
      expect(first.text).toBe(`hello ${round}`);
      model.setScript((request) =>
        request.lastMessage?.role === "tool"
          ? { text: `it said ${request.toolResults.map((result) => result.text).join()}` }
          : { text: "Let me look. ", toolCalls: [{ name: "echo", arguments: { text: `r${round}` } }] },
      );
      const second = await ended(session.send(`echo r${round}`).result, `round ${round}, the tool turn`);
      expect(second.stopReason).toBe("end_turn");
      expect(second.text).toBe(`Let me look. it said echo: r${round}`);
    }
    expect(ran).toEqual(["echo:ok", "echo:ok", "echo:ok"]);
  });

  it("a text turn, then at once a runtime tool the app allows through canUseTool: the turn ends and the tool ran", async () => {
    const asked: string[] = [];
    const session = await createSession({
      backend: { kind: "local", url: server.url },
      agent: { create: { model: model.modelHandle, name: "toolrelay-back-to-back-runtime" } },
      canUseTool: (request) => {
        asked.push(`${request.kind}:${request.toolName}`);
        return { behavior: "allow" };
      },
    });
    sessions.push(session);
    model.setScript(() => ({ text: "hi" }));
    await ended(session.send("hi").result, "the text turn");
    model.setScript((request) =>
      request.lastMessage?.role === "tool"
        ? { text: `ran: ${request.toolResults.map((result) => result.text.trim()).join()}` }
        : { toolCalls: [{ name: "Bash", arguments: { command: "echo back-to-back", description: "echo" } }] },
    );
    const result = await ended(session.send("run it").result, "the Bash turn");
    expect(asked).toEqual(["runtime-tool:Bash"]);
    expect(result.text).toContain("back-to-back");
  });

  it("with no gap the runtime loses the approval: the turn fails TURN_FAILED at once (never hangs), and the session's next turn works", async () => {
    const session = await createSession({
      backend: { kind: "local", url: server.url },
      agent: { create: { model: model.modelHandle, name: "toolrelay-back-to-back-lost" } },
      tools: [echo],
      turnGapMs: 0,
    });
    sessions.push(session);
    const errors: string[] = [];
    session.on("error", (error) => errors.push(error.code));
    model.setScript(() => ({ text: "hello" }));
    await ended(session.send("hello").result, "the text turn");
    model.setScript((request) =>
      request.lastMessage?.role === "tool" ? { text: "done" } : { toolCalls: [{ name: "echo", arguments: { text: "x" } }] },
    );
    const outcome = await ended(
      session.send("echo x").result.then(
        (result) => `ended ${result.stopReason}`,
        (error: { code?: string }) => `failed ${error.code}`,
      ),
      "the tool turn",
    );
    // The window is a race: when the input lands inside it (every run here), the turn fails at once;
    // when it does not, the turn simply ends. It never hangs.
    expect(["failed TURN_FAILED", "ended end_turn"]).toContain(outcome);
    if (outcome === "failed TURN_FAILED") expect(errors).toContain("TURN_FAILED");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    model.setScript(() => ({ text: "still here" }));
    const next = await ended(session.send("are you there?").result, "the turn after");
    expect(next.text).toBe("still here");
  });
});
