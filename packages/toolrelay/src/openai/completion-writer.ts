/**
 * Writes one chat completion to the HTTP response, in the two shapes OpenAI clients read: a JSON
 * `chat.completion` (non-streaming) or server-sent `chat.completion.chunk` events ending in
 * `data: [DONE]` (streaming). The thread drives both through {@link CompletionSink}; assistant
 * text streams as it comes, `tool_calls` come last with `finish_reason: "tool_calls"`. A failure
 * after the stream started is sent as an `error` event (the `openai` client throws it as an
 * `APIError`). Usage is not reported: the runtime does not tell the bridge the token counts.
 */
import type { ServerResponse } from "node:http";
import type { TimerHandle, Timers } from "../internal/timers.js";
import type { ChatApiError } from "./chat-api-error.js";
import type { ReturnedToolCall } from "./client-calls.js";
import { sendJson } from "./bridge-http.js";

export type FinishReason = "stop" | "tool_calls" | "length";

/** The `finish_reason` of a turn that ended with the runtime's `stopReason`. */
export function finishReasonOf(stopReason: string): FinishReason {
  return stopReason === "max_tokens" || stopReason === "max_steps" || stopReason === "length" ? "length" : "stop";
}

export interface CompletionSink {
  /** A piece of the assistant's text. */
  text(delta: string): void;
  /** The answer is complete. */
  finish(reason: FinishReason, toolCalls: readonly ReturnedToolCall[]): void;
  /** The answer failed; nothing more is written. */
  fail(error: ChatApiError): void;
  /** The assistant text so far. */
  readonly content: string;
  /** `true` once finished, failed, or the client went away. */
  readonly closed: boolean;
}

export interface CompletionWriterOptions {
  response: ServerResponse;
  /** The model id the request named. */
  model: string;
  /** Extra headers (the thread id, CORS). */
  headers: Record<string, string>;
  timers: Timers;
  /** SSE keep-alive comment after this much silence, in ms; `0`: none. */
  keepAliveMs: number;
}

/** How one shape writes: the JSON answer at the end, or chunks as they come. */
interface CompletionFormat {
  text(delta: string): void;
  finish(content: string, reason: FinishReason, toolCalls: readonly ReturnedToolCall[]): void;
  fail(error: ChatApiError): void;
}

/** What every shape names the completion by. */
interface CompletionHead {
  readonly options: CompletionWriterOptions;
  readonly id: string;
  readonly created: number;
}

/** The {@link CompletionSink} of one request: JSON when `stream` is false, server-sent events when true. */
export function openCompletionWriter(options: CompletionWriterOptions, stream: boolean): CompletionSink {
  const head: CompletionHead = {
    options,
    id: `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`,
    created: Math.floor(Date.now() / 1000),
  };
  return new CompletionWriter(options, stream ? new StreamFormat(head) : jsonFormat(head));
}

/** Keeps the text so far and writes nothing once closed; the format writes the bytes. */
class CompletionWriter implements CompletionSink {
  readonly #response: ServerResponse;
  readonly #format: CompletionFormat;
  #content = "";
  #done = false;

  constructor(options: CompletionWriterOptions, format: CompletionFormat) {
    this.#response = options.response;
    this.#format = format;
  }

  get content(): string {
    return this.#content;
  }

  get closed(): boolean {
    return this.#done || this.#response.destroyed || this.#response.writableEnded;
  }

  text(delta: string): void {
    if (this.closed || delta === "") return;
    this.#content += delta;
    this.#format.text(delta);
  }

  finish(reason: FinishReason, toolCalls: readonly ReturnedToolCall[]): void {
    if (this.closed) return;
    this.#done = true;
    this.#format.finish(this.#content, reason, toolCalls);
  }

  fail(error: ChatApiError): void {
    if (this.closed) return;
    this.#done = true;
    this.#format.fail(error);
  }
}

/** A JSON `chat.completion`, written at the end. */
function jsonFormat({ options, id, created }: CompletionHead): CompletionFormat {
  return {
    text() {},
    finish(content, reason, toolCalls) {
      const message: Record<string, unknown> = {
        role: "assistant",
        content: content === "" && toolCalls.length > 0 ? null : content,
        refusal: null,
      };
      if (toolCalls.length > 0) message.tool_calls = toolCalls.map(wireToolCall);
      const body = {
        id,
        object: "chat.completion",
        created,
        model: options.model,
        choices: [{ index: 0, message, finish_reason: reason, logprobs: null }],
      };
      sendJson(options.response, 200, body, options.headers);
    },
    fail(error) {
      sendJson(options.response, error.status, error.toBody(), options.headers);
    },
  };
}

/** Server-sent `chat.completion.chunk` events; the headers go out at once. */
class StreamFormat implements CompletionFormat {
  readonly #head: CompletionHead;
  #keepAlive: TimerHandle | undefined;

  constructor(head: CompletionHead) {
    this.#head = head;
    const { response, headers } = head.options;
    response.writeHead(200, {
      ...headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    response.flushHeaders();
    this.#chunk({ role: "assistant", content: "" }, null);
    response.once("close", () => this.#stopKeepAlive());
  }

  text(delta: string): void {
    this.#chunk({ content: delta }, null);
  }

  finish(_content: string, reason: FinishReason, toolCalls: readonly ReturnedToolCall[]): void {
    toolCalls.forEach((call, index) => {
      this.#chunk({ tool_calls: [{ index, ...wireToolCall(call) }] }, null);
    });
    this.#chunk({}, reason);
    this.#end("data: [DONE]\n\n");
  }

  fail(error: ChatApiError): void {
    this.#end(`data: ${JSON.stringify(error.toBody())}\n\n`);
  }

  #chunk(delta: Record<string, unknown>, finishReason: FinishReason | null): void {
    const { id, created, options } = this.#head;
    const chunk = {
      id,
      object: "chat.completion.chunk",
      created,
      model: options.model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    };
    options.response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    this.#armKeepAlive();
  }

  #end(last: string): void {
    this.#stopKeepAlive();
    this.#head.options.response.end(last);
  }

  #armKeepAlive(): void {
    this.#stopKeepAlive();
    const { keepAliveMs, timers, response } = this.#head.options;
    if (keepAliveMs <= 0) return;
    this.#keepAlive = timers.setTimeout(() => {
      this.#keepAlive = undefined;
      if (response.destroyed || response.writableEnded) return;
      response.write(": keep-alive\n\n");
      this.#armKeepAlive();
    }, keepAliveMs);
  }

  #stopKeepAlive(): void {
    if (this.#keepAlive !== undefined) this.#head.options.timers.clearTimeout(this.#keepAlive);
    this.#keepAlive = undefined;
  }
}

function wireToolCall(call: ReturnedToolCall) {
  return { id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } };
}
