/**
 * The directive language the scripted models obey (integration/support/directive-model-main.ts,
 * test/fixtures/sidecar/real-peer-stack.ts): `CALL <tool> <json arguments>` lines in the user's
 * message, one tool call per model response, in order.
 */
import type { ModelRequest } from "./scripted-model-server.js";

/** The `CALL <tool> <json>` lines of `text`, in order. */
export function callDirectives(text: string): Array<{ name: string; arguments: Record<string, unknown> }> {
  const calls: Array<{ name: string; arguments: Record<string, unknown> }> = [];
  for (const line of text.split("\n")) {
    const match = /^\s*CALL\s+([A-Za-z0-9_-]+)\s*(\{.*\})?\s*$/.exec(line);
    if (match) calls.push({ name: match[1]!, arguments: match[2] ? (JSON.parse(match[2]) as Record<string, unknown>) : {} });
  }
  return calls;
}

/** Tool results since the last user message, in order (a non-string content as JSON). */
export function toolResultsSinceUser(request: ModelRequest): string[] {
  const lastUser = request.messages.map((message) => message.role).lastIndexOf("user");
  return request.messages
    .slice(lastUser + 1)
    .filter((message) => message.role === "tool")
    .map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));
}
