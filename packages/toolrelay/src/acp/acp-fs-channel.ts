/**
 * The ACP v1 editor channel: `fs/read_text_file` and `fs/write_text_file`,
 * sent to the editor (the ACP client) over the agent-side connection.
 *
 * Every request has its own deadline, and is cancelled — ACP `$/cancel_request`
 * for its JSON-RPC id, sent by the SDK when the `cancellationSignal` fires —
 * when the deadline passes or the tool call's signal fires. With
 * `stopWaitingOnCancel` the promise rejects at once; the editor's late answer
 * is matched and dropped by the SDK.
 */
import type { AgentContext } from "@agentclientprotocol/sdk";
import { systemTimers, unrefTimer, type Timers } from "../internal/timers.js";
import { EditorRequestError, type EditorCapabilities, type EditorChannel, type EditorRequestOptions } from "./editor-channel.js";

export interface AcpFsChannelOptions {
  /** The agent-side context used to call the editor (`ctx.client` of a handler, or `connection.client`). */
  client: AgentContext;
  /** The ACP session the requests belong to. */
  sessionId: string;
  /** Which of the two methods the editor advertised (`clientCapabilities.fs`). */
  capabilities: EditorCapabilities;
  /** Deadline of each editor request, in ms. Default 10_000. */
  requestTimeoutMs?: number | undefined;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers | undefined;
}

/** The JSON-RPC code of a cancelled request (`RequestError.requestCancelled()`). */
const REQUEST_CANCELLED = -32800;

export class AcpFsChannel implements EditorChannel {
  readonly name = "ACP fs";
  readonly capabilities: Readonly<EditorCapabilities>;
  #options: AcpFsChannelOptions;
  #timeoutMs: number;
  #timers: Timers;

  constructor(options: AcpFsChannelOptions) {
    this.#options = options;
    this.capabilities = Object.freeze({ ...options.capabilities });
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#timers = options.timers ?? systemTimers;
  }

  async readTextFile(path: string, options: EditorRequestOptions): Promise<string> {
    const response = await this.#request("fs/read_text_file", path, options, (settings) =>
      this.#options.client.request("fs/read_text_file", { sessionId: this.#options.sessionId, path }, settings),
    );
    if (typeof response?.content !== "string")
      throw new EditorRequestError("refused", `The editor answered fs/read_text_file for ${path} without text content.`);
    return response.content;
  }

  async writeTextFile(path: string, content: string, options: EditorRequestOptions): Promise<void> {
    await this.#request("fs/write_text_file", path, options, (settings) =>
      this.#options.client.request("fs/write_text_file", { sessionId: this.#options.sessionId, path, content }, settings),
    );
  }

  async #request<T>(
    method: string,
    path: string,
    options: EditorRequestOptions,
    send: (settings: { cancellationSignal: AbortSignal; stopWaitingOnCancel: true }) => Promise<T>,
  ): Promise<T> {
    const callSignal = options.signal;
    if (callSignal.aborted) throw callSignal.reason;
    const deadline = new AbortController();
    const timer = this.#timers.setTimeout(() => deadline.abort(new EditorDeadlineError(method, this.#timeoutMs)), this.#timeoutMs);
    unrefTimer(timer);
    const cancellation = AbortSignal.any([callSignal, deadline.signal]);
    try {
      return await send({ cancellationSignal: cancellation, stopWaitingOnCancel: true });
    } catch (error) {
      if (callSignal.aborted) throw callSignal.reason;
      if (deadline.signal.aborted) {
        throw new EditorRequestError(
          "timeout",
          `The editor did not answer ${method} for ${path} within ${this.#timeoutMs} ms; the request was cancelled.`,
        );
      }
      const code = (error as { code?: unknown } | null)?.code;
      throw new EditorRequestError(
        "refused",
        `The editor refused ${method} for ${path}: ${editorErrorText(error)}`,
        typeof code === "number" ? code : undefined,
      );
    } finally {
      this.#timers.clearTimeout(timer);
    }
  }
}

class EditorDeadlineError extends Error {
  constructor(method: string, timeoutMs: number) {
    super(`${method} timed out after ${timeoutMs} ms`);
    this.name = "TimeoutError";
  }
}

/** The editor's error message (a JSON-RPC error), without its data. */
function editorErrorText(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const text = typeof message === "string" && message !== "" ? message : "no message";
    if (code === REQUEST_CANCELLED) return `the editor cancelled the request (${text})`;
    return typeof code === "number" ? `${text} (code ${code})` : text;
  }
  return String(error);
}
