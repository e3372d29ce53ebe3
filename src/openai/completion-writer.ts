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

abstract class BaseWriter implements CompletionSink {
  protected readonly options: CompletionWriterOptions;
  protected readonly id = `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`;
  protected readonly created = Math.floor(Date.now() / 1000);
  #content = "";
  #done = false;

  constructor(options: CompletionWriterOptions) {
    this.options = options;
  }

  get content(): string {
    return this.#content;
  }

  get closed(): boolean {
    return this.#done || this.options.response.destroyed || this.options.response.writableEnded;
  }

  text(delta: string): void {
    if (this.closed || delta === "") return;
    this.#content += delta;
    this.onText(delta);
  }

  finish(reason: FinishReason, toolCalls: readonly ReturnedToolCall[]): void {
    if (this.closed) return;
    this.#done = true;
    this.onFinish(reason, toolCalls);
  }

  fail(error: ChatApiError): void {
    if (this.closed) return;
    this.#done = true;
    this.onFail(error);
  }

  protected abstract onText(delta: string): void;
  protected abstract onFinish(reason: FinishReason, toolCalls: readonly ReturnedToolCall[]): void;
  protected abstract onFail(error: ChatApiError): void;
}

/** A JSON `chat.completion`, written at the end. */
export class JsonCompletionWriter extends BaseWriter {
  protected onText(): void {}

  protected onFinish(reason: FinishReason, toolCalls: readonly ReturnedToolCall[]): void {
    const message: Record<string, unknown> = {
      role: "assistant",
      content: this.content === "" && toolCalls.length > 0 ? null : this.content,
      refusal: null,
    };
    if (toolCalls.length > 0) message.tool_calls = toolCalls.map(wireToolCall);
    sendJson(
      this.options.response,
      200,
      {
        id: this.id,
        object: "chat.completion",
        created: this.created,
        model: this.options.model,
        choices: [{ index: 0, message, finish_reason: reason, logprobs: null }],
      },
      this.options.headers,
    );
  }

  protected onFail(error: ChatApiError): void {
    sendJson(this.options.response, error.status, error.toBody(), this.options.headers);
  }
}

/** Server-sent `chat.completion.chunk` events; the headers go out at once. */
export class StreamCompletionWriter extends BaseWriter {
  #keepAlive: TimerHandle | undefined;

  constructor(options: CompletionWriterOptions) {
    super(options);
    options.response.writeHead(200, {
      ...options.headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    options.response.flushHeaders();
    this.#chunk({ role: "assistant", content: "" }, null);
    options.response.once("close", () => this.#stopKeepAlive());
  }

  protected onText(delta: string): void {
    this.#chunk({ content: delta }, null);
  }

  protected onFinish(reason: FinishReason, toolCalls: readonly ReturnedToolCall[]): void {
    toolCalls.forEach((call, index) => {
      this.#chunk({ tool_calls: [{ index, ...wireToolCall(call) }] }, null);
    });
    this.#chunk({}, reason);
    this.#end("data: [DONE]\n\n");
  }

  protected onFail(error: ChatApiError): void {
    this.#end(`data: ${JSON.stringify(error.toBody())}\n\n`);
  }

  #chunk(delta: Record<string, unknown>, finishReason: FinishReason | null): void {
    const chunk = {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.options.model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    };
    this.options.response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    this.#armKeepAlive();
  }

  #end(last: string): void {
    this.#stopKeepAlive();
    this.options.response.end(last);
  }

  #armKeepAlive(): void {
    this.#stopKeepAlive();
    const { keepAliveMs, timers, response } = this.options;
    if (keepAliveMs <= 0) return;
    this.#keepAlive = timers.setTimeout(() => {
      this.#keepAlive = undefined;
      if (response.destroyed || response.writableEnded) return;
      response.write(": keep-alive\n\n");
      this.#armKeepAlive();
    }, keepAliveMs);
  }

  #stopKeepAlive(): void {
    if (this.#keepAlive !== undefined) this.options.timers.clearTimeout(this.#keepAlive);
    this.#keepAlive = undefined;
  }
}

function wireToolCall(call: ReturnedToolCall) {
  return { id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } };
}
