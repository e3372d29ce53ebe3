/**
 * Fingerprints of a conversation's messages, for finding the thread a request continues. Each
 * message (system messages left out) gets a canonical form, and the fingerprint of the first `i`
 * messages is a SHA-256 chain over those forms, so "does this request begin with that thread's
 * transcript" is one map lookup per prefix. Only hashes are kept, never the messages.
 *
 * The canonical form is deliberately forgiving of what clients change when they echo a
 * transcript back: surrounding white space, how text is split into parts, the narration beside
 * tool calls (some clients drop it or set it to null), the arguments' formatting and legacy name
 * prefixes. An assistant message with tool calls is identified by its calls' ids and names alone
 * (the bridge mints unique ids).
 */
import { createHash } from "node:crypto";
import type { ChatMessage } from "./chat-request.js";

/** The non-system messages of a request and the fingerprint of every prefix of them. */
export interface TranscriptFingerprints {
  /** The request's messages without system messages, in order. */
  messages: ChatMessage[];
  /** `prefixes[i]` is the fingerprint of `messages.slice(0, i + 1)`. */
  prefixes: string[];
}

/** The fingerprint of no message at all. */
export const EMPTY_TRANSCRIPT = "";

/** The canonical form of one message (system messages have none: they are never compared). */
export function canonicalMessage(message: ChatMessage): string | undefined {
  switch (message.role) {
    case "system":
      return undefined;
    case "user": {
      const text = message.parts
        .flatMap((part) => (part.type === "text" ? [part.text] : []))
        .join("")
        .trim();
      const images = message.parts.flatMap((part) => (part.type === "image" ? [digest(part.url)] : []));
      return JSON.stringify(["user", text, images]);
    }
    case "assistant":
      if (message.toolCalls.length > 0) return JSON.stringify(["assistant", message.toolCalls.map((call) => [call.id, call.name])]);
      return JSON.stringify(["assistant", message.text.trim()]);
    case "tool":
      return JSON.stringify(["tool", message.toolCallId, message.text.trim()]);
  }
}

/** The fingerprint after `message`, given the fingerprint of what came before it. */
export function extendFingerprint(previous: string, message: ChatMessage): string {
  const canonical = canonicalMessage(message);
  if (canonical === undefined) return previous;
  return digest(`${previous}\n${canonical}`);
}

/** Fingerprints of every prefix of `messages` (system messages skipped). */
export function fingerprintTranscript(messages: readonly ChatMessage[]): TranscriptFingerprints {
  const kept: ChatMessage[] = [];
  const prefixes: string[] = [];
  let current = EMPTY_TRANSCRIPT;
  for (const message of messages) {
    if (message.role === "system") continue;
    current = extendFingerprint(current, message);
    kept.push(message);
    prefixes.push(current);
  }
  return { messages: kept, prefixes };
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}
