/**
 * A model that reuses the tool call id `call_0` in consecutive responses of one turn (as some
 * providers number every response's calls), through the bridge, against the REAL Letta Code
 * app-server with the REAL `openai` client: every new request of the runtime reaches the chat
 * client with its own arguments, and the SDK answers each with the client's answer to it (the
 * session's log, with payloads, shows what went on the wire). A call the runtime refused itself
 * (a required argument missing), which the client was given and answered, does not answer the
 * model's next call that reuses its id.
 *
 * What the model then sees is the runtime's doing: Letta Code 0.32.18 keeps one exchange per tool
 * call id in a turn. The model's request after the second answer shows the first reply, its
 * arguments rewritten to the second call's, with the first answer only; the second reply and its
 * answer are not in it. The tests pin that, so that a runtime that keeps both shows up here.
 */
import type OpenAI from "openai";
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogFields } from "../packages/toolrelay/src/index.js";
import { messageText, type ModelRequest, type ScriptedModelServer, type ScriptedReply } from "../test/support/scripted-model-server.js";
import { startBridgeStack, type BridgeStack } from "./support/openai-bridge-stack.js";

const readFile: ChatCompletionFunctionTool = {
  type: "function",
  function: {
    name: "read_file",
    description: "Reads a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
};

/** Model requests so far per user message (the turn it started): the script's step. */
const steps = new Map<string, number>();

/**
 * "SAME" / "OTHER": `call_0` reads a.txt, then `call_0` reads a.txt again / b.txt. "REFUSED":
 * `call_0` with no path (the runtime refuses it) and `call_1` reading b.txt, then `call_0` reads
 * a.txt. Then the answers the model holds.
 */
function script(request: ModelRequest): ScriptedReply {
  const user = request.lastUserText;
  const step = (steps.get(user) ?? 0) + 1;
  steps.set(user, step);
  const call = (path: string | undefined, id = "call_0") => ({ id, name: "read_file", arguments: path === undefined ? {} : { path } });
  if (step === 1 && user.includes("REFUSED")) return { text: "first", toolCalls: [call(undefined), call("b.txt", "call_1")] };
  if (step === 1) return { text: "first", toolCalls: [call("a.txt")] };
  if (step === 2) return { text: "second", toolCalls: [call(user.includes("OTHER") ? "b.txt" : "a.txt")] };
  return { text: `answers: ${toolMessages(request).join(" | ")}` };
}

/** The texts of the tool messages of a model request, in order. */
function toolMessages(request: ModelRequest): string[] {
  return request.messages.filter((message) => message.role === "tool").map((message) => messageText(message.content));
}

let stack: BridgeStack;
let model: ScriptedModelServer;
let client: OpenAI;
const logLines: Array<{ message: string; fields: LogFields }> = [];
const record = (fields: LogFields, message: string) => void logLines.push({ message, fields });

beforeAll(async () => {
  stack = await startBridgeStack(script, "openai-reused-call-id", {
    session: { logger: { debug: record, info: record, warn: record, error: record }, logPayloads: true },
  });
  ({ model } = stack);
  client = stack.client();
}, 60_000);

afterAll(() => stack?.stop());

/**
 * One turn: sends `content`, answers the calls of each response with the next of `answers`, until
 * the agent's answer. Returns the calls the client was given (per response) and the final text.
 */
async function converse(
  content: string,
  answers: readonly string[],
): Promise<{ responses: Array<Array<{ id: string; arguments: string }>>; text: string }> {
  const messages: ChatCompletionMessageParam[] = [{ role: "user", content }];
  const responses: Array<Array<{ id: string; arguments: string }>> = [];
  let answered = 0;
  for (let round = 0; round <= answers.length; round++) {
    const answer = await client.chat.completions.create({ model: "letta-code", messages, tools: [readFile] }, { timeout: 30_000 });
    const choice = answer.choices[0]!;
    if (choice.finish_reason !== "tool_calls") return { responses, text: choice.message.content ?? "" };
    messages.push(choice.message);
    const calls: Array<{ id: string; arguments: string }> = [];
    for (const call of choice.message.tool_calls ?? []) {
      if (call.type !== "function") throw new Error("not a function call");
      messages.push({ role: "tool", tool_call_id: call.id, content: answers[answered++] ?? "no answer scripted" });
      calls.push({ id: call.id, arguments: call.function.arguments });
    }
    responses.push(calls);
  }
  throw new Error(`more calls than the ${answers.length} answers scripted`);
}

/** What the SDK wrote to the runtime for `toolCallId` since log line `from`: [request ids, result text] per call it ran. */
function wireAnswers(toolCallId: string, from: number): Array<[string[], string]> {
  return logLines
    .slice(from)
    .filter((line) => line.message === "tool call end" && line.fields.toolCallId === toolCallId)
    .map((line) => {
      const content = JSON.parse(String(line.fields.result)) as Array<{ text?: string }>;
      return [line.fields.requestIds as string[], content.map((block) => block.text ?? "").join("")];
    });
}

/** The request ids of the runtime's requests for `toolCallId` since log line `from`. */
function requestIds(toolCallId: string, from: number): string[] {
  return logLines
    .slice(from)
    .filter((line) => line.message === "tool call request" && line.fields.toolCallId === toolCallId)
    .map((line) => String(line.fields.requestId));
}

describe("a model that reuses call_0 in consecutive responses of one turn", () => {
  for (const mode of ["SAME", "OTHER"] as const) {
    const second = mode === "SAME" ? '{"path":"a.txt"}' : '{"path":"b.txt"}';
    it(`${mode === "SAME" ? "the same" : "other"} arguments: both calls reach the client, and the runtime gets each answer`, async () => {
      const content = `read twice ${mode}`;
      const fromLog = logLines.length;
      const { responses, text } = await converse(content, ["ONE", "TWO"]);
      expect(responses.map((calls) => calls.map((call) => call.arguments))).toEqual([['{"path":"a.txt"}'], [second]]);
      expect(responses[0]![0]!.id).not.toBe(responses[1]![0]!.id);
      // On the wire: two requests of the runtime, each answered with the client's answer to it.
      const requests = requestIds("call_0", fromLog);
      expect(requests).toHaveLength(2);
      expect(new Set(requests).size).toBe(2);
      expect(wireAnswers("call_0", fromLog)).toEqual([
        [[requests[0]], "ONE"],
        [[requests[1]], "TWO"],
      ]);
      // The model saw the first answer; of the second exchange 0.32.18 keeps only the arguments.
      const turn = model.requests.filter((request) => request.lastUserText === content);
      expect(turn).toHaveLength(3);
      expect(toolMessages(turn[1]!)).toEqual(["ONE"]);
      expect(toolMessages(turn[2]!)).toEqual(["ONE"]);
      const replies = turn[2]!.messages.filter((message) => message.role === "assistant");
      expect(replies.map((reply) => reply.tool_calls?.map((call) => [call.id, call.function.arguments]))).toEqual([[["call_0", second]]]);
      expect(text).toBe("answers: ONE");
    });
  }

  it("after a call the runtime refused itself but the client was given and answered: the reusing call reaches the client, not that answer", async () => {
    const content = "read REFUSED";
    const fromLog = logLines.length;
    const { responses, text } = await converse(content, ["FOR THE REFUSED CALL", "B", "A"]);
    // The client is given both calls of that response, the one the runtime refuses too.
    expect(responses.map((calls) => calls.map((call) => call.arguments))).toEqual([["{}", '{"path":"b.txt"}'], ['{"path":"a.txt"}']]);
    const ids = responses.flat().map((call) => call.id);
    expect(new Set(ids).size).toBe(3);
    // On the wire: call_1 answered B; the reusing call_0 answered A; the refused call's answer never written.
    expect(wireAnswers("call_1", fromLog).map(([, answer]) => answer)).toEqual(["B"]);
    expect(wireAnswers("call_0", fromLog).map(([, answer]) => answer)).toEqual(["A"]);
    expect(JSON.stringify(logLines.slice(fromLog))).not.toContain("FOR THE REFUSED CALL");
    // The model saw the runtime's own refusal of call_0 and B; then, as above, 0.32.18 keeps one
    // call_0 exchange. In the bridge's default mode (strict, where the runtime asks can_use_tool
    // before each call) the refusal comes first; in "unrestricted" (the default before issue 26)
    // it came after B.
    const turn = model.requests.filter((request) => request.lastUserText === content);
    expect(turn).toHaveLength(3);
    expect(toolMessages(turn[1]!)).toEqual([expect.stringContaining("missing required parameter: path"), "B"]);
    expect(text).toBe(`answers: ${toolMessages(turn[2]!).join(" | ")}`);
  });
});
