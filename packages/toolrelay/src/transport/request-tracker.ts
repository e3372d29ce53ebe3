import pTimeout from "p-timeout";
import { ToolrelayError, isToolrelayError } from "../errors.js";
import { systemTimers, type Timers } from "../internal/timers.js";
import type { InboundFrame, OutboundFrame } from "../wire/index.js";
import type { RuntimeLink } from "./runtime-link.js";

/** Default deadline of one request to the runtime: 30 s (the reference client's). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

type ResponseType = InboundFrame["type"];
type FrameOfType<T extends ResponseType> = Extract<InboundFrame, { type: T }>;

interface PendingRequest {
  responseType: ResponseType;
  resolve(frame: InboundFrame): void;
  reject(error: ToolrelayError): void;
}

export interface RequestOptions<T extends ResponseType> {
  /** The `type` of the answer, e.g. `runtime_start_response`. */
  responseType: T;
  /** Deadline in ms. Default 30_000. The runtime answers nothing to a frame it rejects, so every request has one. */
  timeoutMs?: number | undefined;
}

/**
 * Correlates the runtime's answers to our requests by `request_id`. Every
 * request has its own deadline; all waiting requests are rejected at once when
 * the socket they were written to goes away.
 */
export class RequestTracker {
  #link: RuntimeLink;
  #timers: Timers;
  #pending = new Map<string, PendingRequest>();

  constructor(link: RuntimeLink, timers: Timers = systemTimers) {
    this.#link = link;
    this.#timers = timers;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Send `frame` and wait for the answer with the same `request_id`. */
  request<T extends ResponseType>(frame: OutboundFrame & { request_id: string }, options: RequestOptions<T>): Promise<FrameOfType<T>> {
    const requestId = frame.request_id;
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    let settle: PendingRequest | undefined;
    const answer = new Promise<InboundFrame>((resolve, reject) => {
      settle = { responseType: options.responseType, resolve, reject };
    });
    this.#pending.set(requestId, settle!);
    let sent: boolean;
    try {
      sent = this.#link.send(frame);
    } catch (error) {
      // An encoding error (INVALID_FRAME): nothing was written, so nothing may stay registered —
      // a later rejectAll would reject a promise nobody holds (an unhandled rejection).
      this.#pending.delete(requestId);
      return Promise.reject(
        isToolrelayError(error) ? error : new ToolrelayError("INVALID_FRAME", `cannot send ${frame.type}`, { cause: error }),
      );
    }
    if (!sent) {
      this.#pending.delete(requestId);
      // "open" with a refused write: the socket is already closing (the link notices a moment later).
      const why = this.#link.state === "open" ? "its socket is closing" : `the link is ${this.#link.state}`;
      return Promise.reject(
        new ToolrelayError("CONNECTION_CLOSED", `cannot send ${frame.type}: ${why}; nothing was written`, { details: { written: false } }),
      );
    }
    const timeoutError = new ToolrelayError("REQUEST_TIMEOUT", `no ${options.responseType} for ${frame.type} within ${timeoutMs} ms`, {
      details: { requestId, timeoutMs },
    });
    const withDeadline = pTimeout(answer, {
      milliseconds: timeoutMs,
      // Settle the inner promise too, so no promise of ours is left pending after a timeout.
      fallback: () => {
        if (this.#pending.get(requestId) === settle) this.#pending.delete(requestId);
        settle!.reject(timeoutError);
        return answer;
      },
      customTimers: {
        setTimeout: ((callback: () => void, ms: number) => this.#timers.setTimeout(callback, ms)) as typeof globalThis.setTimeout,
        clearTimeout: ((handle: Parameters<Timers["clearTimeout"]>[0]) =>
          this.#timers.clearTimeout(handle)) as typeof globalThis.clearTimeout,
      },
    });
    return withDeadline.finally(() => this.#pending.delete(requestId)) as Promise<FrameOfType<T>>;
  }

  /** Offer an inbound frame; returns `true` when it answered a waiting request. */
  handle(frame: InboundFrame): boolean {
    const requestId = (frame as { request_id?: unknown }).request_id;
    if (typeof requestId !== "string") return false;
    const pending = this.#pending.get(requestId);
    if (pending === undefined || pending.responseType !== frame.type) return false;
    this.#pending.delete(requestId);
    pending.resolve(frame);
    return true;
  }

  /** Reject every waiting request (the socket they went out on is gone). */
  rejectAll(error: ToolrelayError): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const request of pending) request.reject(error);
  }
}
