/**
 * Which messages of a request are new to its thread. A chat client sends the whole conversation
 * every time; the thread's conversation already holds everything up to the bridge's last answer.
 *
 * - The thread's transcript (what it was sent and answered, as a fingerprint) is a prefix of the
 *   request: the new messages are the rest.
 * - A new thread: the new messages are those after the request's last assistant message; the ones
 *   before are earlier history, passed to the new conversation as context.
 * - A thread named by an explicit key whose transcript is not a prefix (the client edited or
 *   regenerated part of the history): the new messages are those after the last assistant
 *   message; the conversation keeps its own history (a Letta conversation cannot be rewound).
 */
import type { ChatMessage, UserPart } from "./chat-request.js";
import { EMPTY_TRANSCRIPT, type TranscriptFingerprints } from "./transcript-fingerprint.js";

export interface RequestTail {
  /** The new messages (system messages left out). */
  messages: ChatMessage[];
  /** Earlier messages to pass to a new conversation (only for a new thread). */
  history: readonly ChatMessage[];
  /** The `role: "tool"` messages among the new ones. */
  toolResults: Array<{ toolCallId: string; text: string; name: string | undefined }>;
  /** The user's new content, in order. */
  userParts: UserPart[];
  /** Assistant messages the client itself put among the new ones (text only). */
  clientAssistantTexts: string[];
  /** The request's last system (or developer) message, if any. */
  system: string | undefined;
}

/**
 * Split a request's messages for a thread whose transcript fingerprint is `transcript`
 * ({@link EMPTY_TRANSCRIPT} for a new thread). Returns the index into `fingerprints.prefixes` the
 * transcript matched, or -1.
 */
export function requestTail(
  fingerprints: TranscriptFingerprints,
  transcript: string,
  system: string | undefined,
): { tail: RequestTail; matched: number } {
  const { messages, prefixes } = fingerprints;
  const matched = transcript === EMPTY_TRANSCRIPT ? -1 : prefixes.lastIndexOf(transcript);
  let start: number;
  let history: readonly ChatMessage[] = [];
  if (matched >= 0) start = matched + 1;
  else {
    start = lastAssistantIndex(messages) + 1;
    if (transcript === EMPTY_TRANSCRIPT) history = messages.slice(0, start);
  }
  const tail = messages.slice(start);
  return {
    matched,
    tail: {
      messages: tail,
      history,
      toolResults: tail.flatMap((message) =>
        message.role === "tool" ? [{ toolCallId: message.toolCallId, text: message.text, name: message.name }] : [],
      ),
      userParts: tail.flatMap((message) => (message.role === "user" ? message.parts : [])),
      clientAssistantTexts: tail.flatMap((message) => (message.role === "assistant" && message.text.trim() !== "" ? [message.text] : [])),
      system,
    },
  };
}

/** The request's last system message, or `undefined`. */
export function lastSystemText(messages: readonly ChatMessage[]): string | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === "system") return message.text;
  }
  return undefined;
}

function lastAssistantIndex(messages: readonly ChatMessage[]): number {
  for (let index = messages.length - 1; index >= 0; index--) if (messages[index]!.role === "assistant") return index;
  return -1;
}

/** The tool name of call `toolCallId` in the assistant messages of `messages`. */
export function nameInHistory(messages: readonly ChatMessage[], toolCallId: string): string | undefined {
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    const call = message.toolCalls.find((candidate) => candidate.id === toolCallId);
    if (call !== undefined) return call.name;
  }
  return undefined;
}
