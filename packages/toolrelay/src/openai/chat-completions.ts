/**
 * `POST /v1/chat/completions`: find (or open) the request's thread, let it answer, and index the
 * transcript it produced. The thread is the one the explicit key names (header, `metadata` or
 * `user`, as configured), else the one whose transcript the request's messages begin with, else
 * a new one. See docs/openai-bridge.md, "Threads".
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AgentOptions, BackendOptions } from "../session/session-options.js";
import { ChatApiError } from "./chat-api-error.js";
import { parseChatRequest, type ChatRequest } from "./chat-request.js";
import { ChatThread } from "./chat-thread.js";
import { type CompletionSink, openCompletionWriter } from "./completion-writer.js";
import { lastSystemText, requestTail } from "./request-tail.js";
import type { ResolvedBridgeOptions } from "./resolve-bridge-options.js";
import type { ThreadDirectory } from "./thread-directory.js";
import { EMPTY_TRANSCRIPT, TranscriptFingerprints } from "./transcript-fingerprint.js";
import { CONVERSATION_HEADER, THREAD_HEADER } from "./thread-headers.js";

/** Longest explicit thread key accepted. */
const MAX_THREAD_KEY_CHARS = 256;

export interface ChatCompletionsContext {
  options: ResolvedBridgeOptions;
  backend: BackendOptions;
  directory: ThreadDirectory;
  /** The agent a new thread of this principal talks to (created once per principal for `{ create }`). */
  agentFor(principal: string, open: (agent: AgentOptions) => Promise<ChatThread>): Promise<ChatThread>;
}

/** Answer one chat request whose body was read and whose caller is `principal`. Throws {@link ChatApiError} before any byte was written. */
export async function answerChatCompletion(
  context: ChatCompletionsContext,
  principal: string,
  body: unknown,
  http: { request: IncomingMessage; response: ServerResponse; headers: Record<string, string> },
): Promise<void> {
  const { options, directory } = context;
  const request = parseChatRequest(body);
  if (request.model !== options.modelId) {
    throw new ChatApiError(
      404,
      "not_found_error",
      "model_not_found",
      `the model "${request.model}" does not exist here; this bridge serves "${options.modelId}"`,
      { param: "model" },
    );
  }
  const key = threadKeyOf(request, http.request, options);
  const fingerprints = new TranscriptFingerprints(request.messages);
  const system = lastSystemText(request.messages);
  let thread = key !== undefined ? await directory.byId(principal, key) : directory.byTranscript(principal, fingerprints);
  // A busy thread gets a short grace before the 409: its client may have just left it and come back.
  if (thread?.busy && !(await thread.whenFree())) throw ChatApiError.threadBusy(thread.id);
  const { tail } = requestTail(fingerprints, thread?.transcript ?? EMPTY_TRANSCRIPT, system);
  if (thread === undefined) {
    if (tail.userParts.length === 0 && tail.toolResults.length === 0) {
      throw ChatApiError.invalid(
        "nothing_to_answer",
        "the request's last message is the assistant's: there is nothing to answer",
        "messages",
      );
    }
    const id = key ?? `thread_${randomBytes(12).toString("base64url")}`;
    thread = await directory.add(principal, id, () =>
      context.agentFor(principal, (agent) =>
        ChatThread.open({ id, principal, bridge: options, backend: context.backend, agent, tools: request.tools }),
      ),
    );
  }
  const controller = new AbortController();
  const { response } = http;
  // The client went away before the answer was complete: stop the turn.
  response.once("close", () => {
    if (!response.writableEnded) controller.abort(new Error("the client closed the connection"));
  });
  const opened = thread;
  const createSink = (): CompletionSink => {
    const writerOptions = {
      response,
      model: request.model,
      headers: { ...http.headers, [THREAD_HEADER]: opened.id, [CONVERSATION_HEADER]: opened.conversationId },
      timers: options.timers,
      keepAliveMs: options.keepAliveMs,
    };
    return openCompletionWriter(writerOptions, request.stream === true);
  };
  try {
    const transcript = await thread.serve(request, fingerprints, tail, createSink, controller.signal);
    directory.committed(thread, transcript);
  } catch (error) {
    directory.committed(thread, undefined);
    throw error;
  }
}

/** The explicit thread key of a request, from the sources the bridge reads (in this order: header, metadata, user). */
function threadKeyOf(request: ChatRequest, http: IncomingMessage, options: ResolvedBridgeOptions): string | undefined {
  const { header, metadata, user } = options.threadKeys;
  const fromHeader = header === undefined ? undefined : http.headers[header];
  if (Array.isArray(fromHeader)) throw ChatApiError.invalid("invalid_thread_key", `more than one ${header} header`);
  const candidates: Array<[string, string | undefined]> = [
    [`the ${header} header`, fromHeader],
    [`metadata.${metadata}`, metadata === undefined ? undefined : request.metadata?.[metadata]],
    ["user", user ? request.user : undefined],
  ];
  for (const [where, value] of candidates) {
    if (value === undefined) continue;
    const trimmed = value.trim();
    if (trimmed === "" || trimmed.length > MAX_THREAD_KEY_CHARS) {
      throw ChatApiError.invalid("invalid_thread_key", `${where} must be 1-${MAX_THREAD_KEY_CHARS} characters`);
    }
    return trimmed;
  }
  return undefined;
}
