/**
 * A chat client that goes away while the model is still answering, and at once sends its next
 * request on the same thread — against the REAL Letta Code app-server, with the REAL `openai`
 * client. docs/openai-bridge.md promises that the bridge stops the left turn and that the thread
 * answers its next request: with its own answer (not a 409 while the left turn stops, not a 502
 * when the left turn's end arrives, not the left turn's answer).
 */
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelRequest, ScriptedModelServer, ScriptedReply } from "../test/support/scripted-model-server.js";
import { startBridgeStack, type BridgeStack } from "./support/openai-bridge-stack.js";

/** "SLOW<ms> ..." → "slow answer" after that many ms; anything else → "echo: <text>" at once. */
function script(request: ModelRequest): ScriptedReply {
  const user = request.lastUserText;
  const slow = /^SLOW(\d+)/.exec(user);
  if (slow) return { text: "slow answer", delayMs: Number(slow[1]) };
  return { text: `echo: ${user}` };
}

let stack: BridgeStack;
let model: ScriptedModelServer;
let client: OpenAI;

beforeAll(async () => {
  stack = await startBridgeStack(script, "openai-client-leaves");
  ({ model } = stack);
  client = stack.client();
}, 60_000);

afterAll(() => stack?.stop());

/**
 * Opens a streamed completion for `content` and closes the connection once the model is answering
 * it (the scripted model received its request and waits `delayMs`). Returns the `finish_reason`s
 * of the chunks read before (none is `stop`: the answer never finished).
 */
async function leaveWhileTheModelAnswers(content: string, headers: Record<string, string>): Promise<Array<string | null | undefined>> {
  const controller = new AbortController();
  const from = model.requests.length;
  const stream = await client.chat.completions.create(
    { model: "letta-code", messages: [{ role: "user", content }], stream: true },
    { headers, signal: controller.signal },
  );
  const finishes: Array<string | null | undefined> = [];
  const reading = (async () => {
    for await (const chunk of stream) finishes.push(chunk.choices[0]?.finish_reason);
  })();
  await model.waitForRequest((request) => request.lastUserText === content, { fromIndex: from, timeoutMs: 20_000 });
  controller.abort();
  await reading;
  return finishes;
}

/** One request on the thread `headers` name; the answer's text. */
async function ask(content: string, headers: Record<string, string>): Promise<string | null> {
  const answer = await client.chat.completions.create(
    { model: "letta-code", messages: [{ role: "user", content }] },
    { headers, timeout: 30_000 },
  );
  return answer.choices[0]!.message.content;
}

describe("a client that leaves mid-stream and sends its next request at once", () => {
  // 1.2 s: the runtime ends the left turn before the SDK's 2 s abort settle; 4 s: after it.
  for (const delayMs of [1_200, 4_000]) {
    it(`the next request gets its own answer (the model answers the left message after ${delayMs} ms)`, async () => {
      const headers = { "x-toolrelay-thread": `leaves-at-once-${delayMs}` };
      // A first answer: the thread exists, and the client keeps a keep-alive connection that will
      // carry the next request at once (possibly read before the server sees the left stream close).
      expect(await ask(`turn-1 ${delayMs}`, headers)).toBe(`echo: turn-1 ${delayMs}`);
      expect(await leaveWhileTheModelAnswers(`SLOW${delayMs} then leave`, headers)).not.toContain("stop");
      // At once: no pause for the left turn to stop.
      expect(await ask(`turn-back ${delayMs}`, headers)).toBe(`echo: turn-back ${delayMs}`);
      // The thread goes on in the same conversation, which kept the answer the next request got.
      expect(await ask(`turn-after ${delayMs}`, headers)).toBe(`echo: turn-after ${delayMs}`);
      const history = JSON.stringify(model.requests.find((request) => request.lastUserText === `turn-after ${delayMs}`)!.messages);
      expect(history).toContain(`echo: turn-back ${delayMs}`);
      // The left message is in the same conversation, before the next one. (What 0.32.18 keeps of
      // the left turn varies: the interruption, nothing, or, when it refuses the abort, the slow
      // answer: docs/protocol.md#abort.)
      expect(history.indexOf(`SLOW${delayMs} then leave`)).toBeGreaterThan(history.indexOf(`echo: turn-1 ${delayMs}`));
      expect(history.indexOf(`SLOW${delayMs} then leave`)).toBeLessThan(history.indexOf(`"turn-back ${delayMs}"`));
    });
  }
});
