/**
 * The message the agent gets for a request: the client's new content, with what the agent needs
 * to know around it, each as its own `<system-reminder>` part (the runtime's own convention):
 * the client's system message when it changed, earlier history for a new conversation, results
 * that arrived after their call had ended, and the tool nudge.
 *
 * The nudge rule: it is added only when this request brings no tool result. A request that
 * delivers results (to a pending call or late) never repeats it (models then re-ran the same
 * read every turn), while results in the history, from earlier requests, leave it in place.
 */
import type { MessageInput } from "../session/session.js";
import type { ChatMessage, UserPart } from "./chat-request.js";
import type { RequestTail } from "./request-tail.js";

type InputPart = Exclude<MessageInput, string>[number];

export interface TurnInputContext {
  /** The client's system message, when it differs from the last one this thread forwarded. */
  changedSystem: string | undefined;
  /** Results of the tail whose call is not pending (it ended, or is unknown), with their tool names. */
  lateResults: Array<{ toolCallId: string; name: string | undefined; text: string }>;
  /** The nudge to add when the rule allows it (undefined: none configured or no tools). */
  nudge: string | undefined;
  /** Characters of history to pass, newest kept. */
  maxHistoryChars: number;
}

/** The input for a new turn, or `undefined` when the tail holds nothing for the agent. */
export function buildTurnInput(tail: RequestTail, context: TurnInputContext): MessageInput | undefined {
  const parts: InputPart[] = [];
  if (context.changedSystem !== undefined && context.changedSystem.trim() !== "") {
    parts.push(reminder(`The chat client's instructions (its system message):\n${context.changedSystem}`));
  }
  const history = renderHistory(tail.history, context.maxHistoryChars);
  if (history !== "") parts.push(reminder(`Earlier messages of this conversation, kept by the chat client (oldest first):\n${history}`));
  for (const text of tail.clientAssistantTexts) parts.push(reminder(`The chat client added this as your reply:\n${text}`));
  for (const result of context.lateResults) {
    parts.push({
      type: "text",
      text: `Result of your earlier call to ${result.name ?? "a tool"} (id ${result.toolCallId}), which the client sent after the call had ended:\n${result.text}`,
    });
  }
  const user = tail.userParts.flatMap(toInputPart);
  if (parts.length === 0 && user.length === 0) return undefined;
  if (context.nudge !== undefined && tail.toolResults.length === 0 && user.length > 0) parts.push(reminder(context.nudge));
  parts.push(...user);
  return parts;
}

/** Earlier messages as plain lines, oldest first, at most `maxChars` (the newest kept). */
export function renderHistory(messages: readonly ChatMessage[], maxChars: number): string {
  // A tool message rarely names its tool: take the name from the call it answers.
  const callNames = new Map(
    messages.flatMap((message) => (message.role === "assistant" ? message.toolCalls.map((call) => [call.id, call.name] as const) : [])),
  );
  const lines = messages.map((message) => renderMessage(message, callNames)).filter((line) => line !== "");
  let total = 0;
  let first = lines.length;
  while (first > 0 && total + lines[first - 1]!.length + 1 <= maxChars) total += lines[--first]!.length + 1;
  const kept = lines.slice(first);
  if (first > 0) kept.unshift(`[${first} earlier message${first === 1 ? "" : "s"} omitted]`);
  return kept.join("\n");
}

function renderMessage(message: ChatMessage, callNames: ReadonlyMap<string, string>): string {
  switch (message.role) {
    case "system":
      return "";
    case "user":
      return `[user] ${message.parts.map((part) => (part.type === "text" ? part.text : "[image]")).join("")}`;
    case "assistant": {
      const calls = message.toolCalls
        .map((call) => `\n[assistant called ${call.name} (id ${call.id}) with ${call.arguments || "{}"}]`)
        .join("");
      return `${message.text.trim() === "" ? "" : `[assistant] ${message.text}`}${calls}`.trim();
    }
    case "tool":
      return `[result of ${message.name ?? callNames.get(message.toolCallId) ?? "a tool call"} (id ${message.toolCallId})] ${message.text}`;
  }
}

function reminder(text: string): InputPart {
  return { type: "text", text: `<system-reminder>\n${text}\n</system-reminder>` };
}

function toInputPart(part: UserPart): InputPart[] {
  if (part.type === "text") return part.text === "" ? [] : [{ type: "text", text: part.text }];
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
  if (data) return [{ type: "image", source: { type: "base64", media_type: data[1]!, data: data[2]! } }];
  return [{ type: "image", source: { type: "url", url: part.url } }];
}
