/**
 * Fingerprints of a conversation's messages, for finding the thread a request continues. Each
 * message (system messages left out) gets a canonical form; the fingerprint of the first `i`
 * messages is the SHA-256 of their canonical forms, one a line. Every thread's transcript ends
 * with an answer of the bridge's, an assistant message, so only the prefixes that end with one
 * are fingerprinted: one running hash per request, copied at each assistant message, makes "does
 * this request begin with that thread's transcript" one map lookup per answer. Only hashes are
 * kept, never the messages.
 *
 * The canonical form is deliberately forgiving of what clients change when they echo a
 * transcript back: surrounding white space, how text is split into parts, the narration beside
 * tool calls (some clients drop it or set it to null), the arguments' formatting and legacy name
 * prefixes. An assistant message with tool calls is identified by its calls' ids and names alone
 * (the bridge mints unique ids).
 */
import { createHash, type Hash } from "node:crypto";
import type { ChatMessage } from "./chat-request.js";

/** The fingerprint of no message at all (a new thread's transcript). */
export const EMPTY_TRANSCRIPT = "";

/** The non-system messages of a request, and the fingerprints of its prefixes that end with an assistant message. */
export class TranscriptFingerprints {
  /** The request's messages without system messages, in order. */
  readonly messages: readonly ChatMessage[];
  /** `prefixes[i]`: the fingerprint of `messages.slice(0, i + 1)` when `messages[i]` is an assistant message, else `undefined`. */
  readonly prefixes: readonly (string | undefined)[];
  readonly #hash: Hash;

  constructor(messages: readonly ChatMessage[]) {
    const kept: ChatMessage[] = [];
    const prefixes: (string | undefined)[] = [];
    const hash = createHash("sha256");
    for (const message of messages) {
      const canonical = canonicalMessage(message);
      if (canonical === undefined) continue;
      hash.update(`${canonical}\n`);
      kept.push(message);
      prefixes.push(message.role === "assistant" ? hash.copy().digest("base64url") : undefined);
    }
    this.messages = kept;
    this.prefixes = prefixes;
    this.#hash = hash;
  }

  /** The fingerprint of all these messages followed by `answer` (a transcript after the bridge answered). */
  extendedBy(answer: ChatMessage): string {
    const hash = this.#hash.copy();
    const canonical = canonicalMessage(answer);
    if (canonical !== undefined) hash.update(`${canonical}\n`);
    return hash.digest("base64url");
  }
}

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
      const images = message.parts.flatMap((part) =>
        part.type === "image" ? [createHash("sha256").update(part.url).digest("base64url")] : [],
      );
      return JSON.stringify(["user", text, images]);
    }
    case "assistant":
      if (message.toolCalls.length > 0) return JSON.stringify(["assistant", message.toolCalls.map((call) => [call.id, call.name])]);
      return JSON.stringify(["assistant", message.text.trim()]);
    case "tool":
      return JSON.stringify(["tool", message.toolCallId, message.text.trim()]);
  }
}
