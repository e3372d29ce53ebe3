/**
 * How the NATS KV journal meets a failed request: a lost race (`isWrongRevision`) is the caller's
 * to handle; a request the servers did not answer (a timeout, no responders while a stream elects
 * a leader, a reconnect) is tried again with backoff until the retry window ends; anything else
 * (the connection closed, a value over the server's max payload) fails at once. Every failure
 * leaves as a `ToolrelayError` naming what was being done.
 */
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { ClosedConnectionError, ConnectionError, DrainingConnectionError, RequestError, TimeoutError } from "@nats-io/transport-node";
import { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";

/** Whether a KV write failed because the key exists or its revision moved (a create or update lost a race). */
export function isWrongRevision(error: unknown): boolean {
  if (error instanceof JetStreamApiError)
    return error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown;
  return /wrong last sequence|key exists/i.test(messageOf(error));
}

/** Whether trying the same request again may succeed: the servers did not answer, or said "not now". */
export function isTransient(error: unknown): boolean {
  if (error instanceof ClosedConnectionError || error instanceof DrainingConnectionError) return false;
  if (error instanceof TimeoutError || error instanceof RequestError || error instanceof ConnectionError) return true;
  // No responders on a JetStream subject (no stream leader yet) comes back as "jetstream is not enabled".
  if ((error as { name?: unknown } | undefined)?.name === "JetStreamNotEnabled") return true;
  // 503: "JetStream system temporarily unavailable", a stream without quorum; 408: a request timeout.
  if (error instanceof JetStreamApiError) return error.status === 503 || error.status === 408;
  return false;
}

/** Backoff of the first retry, doubled each time up to {@link MAX_BACKOFF_MS}. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 2_000;

/**
 * `operation()`, tried again while it fails transiently, the connection is open and `windowMs` has
 * not passed since the first try (by `timers`). Any other failure rejects at once, unchanged (a lost
 * race stays recognisable); the last transient one rejects as a {@link RetryWindowEnded}.
 */
export async function withRetry<T>(operation: () => Promise<T>, timers: Timers, windowMs: number, isClosed: () => boolean): Promise<T> {
  const deadline = timers.now() + windowMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!isTransient(error)) throw error;
      const backoff = Math.min(FIRST_BACKOFF_MS * 2 ** attempt, MAX_BACKOFF_MS);
      if (isClosed() || timers.now() + backoff > deadline) throw new RetryWindowEnded(error, attempt + 1);
      await new Promise<void>((resolve) => timers.setTimeout(resolve, backoff));
    }
  }
}

/** The last error of {@link withRetry}, with how many tries it made. */
export class RetryWindowEnded extends Error {
  readonly attempts: number;
  constructor(cause: unknown, attempts: number) {
    super(messageOf(cause), { cause });
    this.name = "RetryWindowEnded";
    this.attempts = attempts;
  }
}

/** `error` as the journal reports it: what failed (`what`, e.g. "start tr1_…"), why, and a code. */
export function journalError(error: unknown, what: string): ToolrelayError {
  if (ToolrelayError.is(error)) return error;
  const attempts = error instanceof RetryWindowEnded ? error.attempts : 1;
  const cause = error instanceof RetryWindowEnded ? error.cause : error;
  const tries = attempts > 1 ? ` after ${attempts} tries` : "";
  if (cause instanceof ClosedConnectionError || cause instanceof DrainingConnectionError)
    return new ToolrelayError("CONNECTION_CLOSED", `nats-kv journal: ${what}: the NATS connection is closed`, { cause });
  const code = "JOURNAL_FAILED";
  return new ToolrelayError(code, `nats-kv journal: ${what} failed${tries}: ${messageOf(cause)}`, { cause, details: { attempts } });
}

function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | undefined)?.message;
  return typeof message === "string" ? message : String(error);
}
