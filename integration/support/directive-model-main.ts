/**
 * The scripted model as its own process (for the live relay suite, where the
 * model, the relay and the listener each run in a separate process). It obeys
 * directives in the user's message:
 *
 *   CALL <tool_name> <json arguments>     (one per line, called in order, one per model response)
 *   DESCRIBE <tool_name>                  (the final answer adds `offered <name>: <the tool as offered, JSON>`)
 *
 * After the last directive's result it answers `done: <every tool result, joined by " | ">`.
 * A message without directives is answered `pong`. Prints `Model listening on <url>`.
 *
 * With `DIRECTIVE_MODEL_LOG_REQUESTS=1` it also prints one `MODEL-REQUEST <json>` line per chat
 * request: the tool calls of the last assistant message and the tool results after it (each by
 * `tool_call_id`), so a test in another process can see what the model was sent.
 */
import { messageText, startScriptedModelServer, type ModelRequest } from "../../test/support/scripted-model-server.js";
import { callDirectives, toolResultsSinceUser } from "../../test/support/model-directives.js";

const logRequests = process.env.DIRECTIVE_MODEL_LOG_REQUESTS === "1";

/** A user message's own text: its parts without the runtime's `<system-reminder>` ones. */
function ownText(content: unknown): string {
  if (!Array.isArray(content)) return messageText(content);
  return content
    .map((part) => messageText([part]))
    .filter((text) => !text.trimStart().startsWith("<system-reminder>"))
    .join("\n");
}

function logRequest(request: ModelRequest): void {
  const lastAssistant = [...request.messages].reverse().find((message) => message.role === "assistant");
  const line = {
    index: request.index,
    lastUserText: request.lastUserText.slice(0, 500),
    userTexts: request.messages.filter((message) => message.role === "user").map((message) => ownText(message.content).slice(0, 500)),
    assistantToolCalls: (lastAssistant?.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name })),
    toolResults: request.toolResults.map((result) => ({ toolCallId: result.toolCallId, text: result.text.slice(0, 4_000) })),
  };
  process.stdout.write(`MODEL-REQUEST ${JSON.stringify(line)}\n`);
}

const server = await startScriptedModelServer({
  script: (request) => {
    if (logRequests) logRequest(request);
    const wanted = callDirectives(request.lastUserText);
    if (wanted.length === 0 && !/^\s*DESCRIBE\s/m.test(request.lastUserText)) return { text: "pong" };
    const results = toolResultsSinceUser(request);
    const next = wanted[results.length];
    if (next) return results.length === 0 ? { text: "Working on it.", toolCalls: [next] } : { toolCalls: [next] };
    const described = [...request.lastUserText.matchAll(/^\s*DESCRIBE\s+([A-Za-z0-9_-]+)\s*$/gm)].map((match) => {
      const offered = request.tools.find((tool) => tool.function.name === match[1]);
      return `\noffered ${match[1]}: ${offered ? JSON.stringify(offered.function) : "(not offered)"}`;
    });
    return { text: `done: ${results.join(" | ")}${described.join("")}` };
  },
});
process.stdout.write(`Model listening on ${server.url} handle ${server.modelHandle}\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
