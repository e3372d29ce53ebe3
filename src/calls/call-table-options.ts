/**
 * The options, requests and events of a {@link CallTable} (call-table.ts).
 */
import { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import type { CallKey } from "./call-key.js";
import type { CallOutcome } from "./call-outcome.js";
import type { ToolCallResponseBody, ToolAnnotations } from "./outcome-shapes.js";
import type { ReplayCacheOptions } from "./replay-cache.js";

/** Default reconnect grace window: 30 s. */
export const DEFAULT_RECONNECT_GRACE_MS = 30_000;
/** The longest delay a timer takes (about 24.8 days); longer timeouts are clamped to it. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

export interface CallTableOptions {
  /** Timer source; inject fakes for exact tests. Default `systemTimers`. */
  timers?: Timers;
  /** Bounds of the replay cache and its tombstones. Defaults: 1,024 entries, 10 min; 65,536 tombstones, 24 h. */
  replay?: ReplayCacheOptions;
  /**
   * How long calls keep running after the link is lost (ms). When it is not
   * back by then, every running call settles as `disconnected`. Default 30_000.
   */
  reconnectGraceMs?: number;
  /**
   * Write one response frame now. Returns `false` when the link is down and
   * nothing was written; the table then holds the response until `linkUp`.
   * Should not throw; a throw counts as `false` and is reported to `onCallbackError`.
   */
  deliver(requestId: string, response: ToolCallResponseBody): boolean;
  /** Once per execution, after its outcome is set and its response handed to `deliver`. Default: none. */
  onSettled?(event: CallSettledEvent): void;
  /** A callback finished after its call was settled; the result was not sent. Default: none. */
  onLate?(event: CallLateEvent): void;
  /** `deliver`, `onSettled` or `onLate` threw; the table carried on. Default: the error is ignored. */
  onCallbackError?(error: unknown): void;
}

/** One `external_tool_call_request`, as the table sees it. */
export interface CallRequest {
  /** Delivery identity: the response frame echoes it. */
  requestId: string;
  /** Execution identity: at most one run per key. */
  key: CallKey;
  toolName: string;
  /** Deadline of the run, in ms (clamped to 0 ... {@link MAX_TIMER_DELAY_MS}). */
  timeoutMs: number;
  /** Decide the advice in a timeout response. Default `{}` (may have side effects). */
  annotations?: ToolAnnotations;
  /**
   * The caller's signal (session-level). When it fires, the call settles as
   * `cancelled` and the callback's signal is aborted with this signal's own
   * `reason`, unchanged. Its listener is removed when the call settles.
   */
  signal?: AbortSignal;
  /** Runs preflight and the tool. Should never reject; a rejection or throw becomes `tool-error`. */
  run(signal: AbortSignal): Promise<CallOutcome> | CallOutcome;
}

/**
 * What `request` did:
 * - `started`: a new execution (its `run` was called, or it was refused at once when the caller's signal had fired);
 * - `joined`: the same key is running; this request id gets its response too;
 * - `replayed`: the key settled before; its cached response was sent (or held) for this request id;
 * - `expired`: the key ran before but its outcome was evicted; the "outcome unknown" error was sent;
 * - `duplicate`: this very request id was already answered (or is already waiting): nothing sent;
 * - `closed`: the table is closed; a `cancelled` error was sent and nothing ran.
 */
export type RequestDisposition = "started" | "joined" | "replayed" | "expired" | "duplicate" | "closed";

/** One execution ended. */
export interface CallSettledEvent {
  key: CallKey;
  /** Every request id that waited for this execution, first one first. */
  requestIds: string[];
  toolName: string;
  outcome: CallOutcome;
  /** From `request` to settlement, by `Timers.now()`. */
  durationMs: number;
}

/** A callback's result that arrived after its call was settled (never sent). */
export interface CallLateEvent {
  key: CallKey;
  toolName: string;
  /** What the callback produced, too late. */
  outcome: CallOutcome;
}

/** A tool deadline as a timer delay: negative or NaN → 0, over {@link MAX_TIMER_DELAY_MS} → that. */
export function clampTimeoutMs(timeoutMs: number): number {
  if (!(timeoutMs >= 0)) return 0;
  return Math.min(timeoutMs, MAX_TIMER_DELAY_MS);
}

/** `reconnectGraceMs`, checked: 0 ... {@link MAX_TIMER_DELAY_MS}; throws `INVALID_OPTIONS` otherwise. */
export function checkReconnectGraceMs(graceMs: number): number {
  if (!(graceMs >= 0 && graceMs <= MAX_TIMER_DELAY_MS)) {
    throw new ToolrelayError("INVALID_OPTIONS", `reconnectGraceMs must be 0 ... ${MAX_TIMER_DELAY_MS} (got ${String(graceMs)})`);
  }
  return graceMs;
}
