/**
 * The options, requests and bounds of a {@link CallTable} (call-table.ts).
 */
import { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import type { ClientTool } from "../tools/index.js";
import type { CallKey } from "./call-key.js";
import type { CallRecord } from "./call-record.js";

/** Every bound of the table; each an option of `createSession` too. */
export interface CallLimits {
  /** Calls running at once; past it a request is answered "busy" and not run. Default 256. */
  maxConcurrentCalls: number;
  /** Settled outcomes kept for replay. Default 1,024. */
  maxCachedCalls: number;
  /** Characters (text and image data) of all cached responses together. Default 8,388,608 (8 Mi). */
  maxCachedChars: number;
  /** A cached outcome is forgotten once this old (ms since settlement). Default 600,000 (10 min). */
  cacheAgeMs: number;
  /** Forgotten calls remembered (their request ids, so a repeat is never run again). Default 4,096. */
  maxForgottenCalls: number;
  /** A forgotten call is let go this long after it settled (ms). Default 86,400,000 (24 h). */
  forgottenAgeMs: number;
  /** Characters of responses held for a lost link; past it the oldest is replaced by a short error. Default 8,388,608. */
  maxHeldChars: number;
  /** Running calls survive a lost link this long (ms), then settle `disconnected`. Default 30,000. */
  reconnectGraceMs: number;
  /**
   * After a reconnect where the runtime kept its calls, answers written on the old link within
   * this many ms before it was lost are written again (they may not have arrived; the runtime
   * ignores an answer it already has). `0` disables. Default 30,000.
   */
  resendWindowMs: number;
  /** Deadline of a tool without its own `timeoutMs` (ms). Default 60,000. */
  toolTimeoutMs: number;
  /** Largest input, in UTF-8 bytes of its JSON. Default 1,048,576 (1 MiB). */
  maxInputBytes: number;
  /** Text results are clamped to this many characters. Default 32,000 (the runtime's own clamp). */
  maxResultChars: number;
  /** Longest `request_id` accepted; a longer one is answered with an error and not kept. Default 256. */
  maxRequestIdChars: number;
  /** Longest `tool_call_id` accepted (answered with an error past it). Default 512. */
  maxToolCallIdChars: number;
  /** Longest `tool_name` accepted (answered with an error past it). Default 256. */
  maxToolNameChars: number;
}

export const DEFAULT_CALL_LIMITS: Readonly<CallLimits> = Object.freeze({
  maxConcurrentCalls: 256,
  maxCachedCalls: 1_024,
  maxCachedChars: 8 * 1_048_576,
  cacheAgeMs: 600_000,
  maxForgottenCalls: 4_096,
  forgottenAgeMs: 86_400_000,
  maxHeldChars: 8 * 1_048_576,
  reconnectGraceMs: 30_000,
  resendWindowMs: 30_000,
  toolTimeoutMs: 60_000,
  maxInputBytes: 1_048_576,
  maxResultChars: 32_000,
  maxRequestIdChars: 256,
  maxToolCallIdChars: 512,
  maxToolNameChars: 256,
});

/** The longest delay a timer takes (2^31 − 1 ms). */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** `limits` over the defaults, each checked; `INVALID_OPTIONS` names the bad one. */
export function resolveCallLimits(limits: Partial<CallLimits> = {}): CallLimits {
  const resolved = { ...DEFAULT_CALL_LIMITS };
  for (const [name, value] of Object.entries(limits) as Array<[keyof CallLimits, unknown]>) {
    if (value === undefined) continue;
    if (!(name in DEFAULT_CALL_LIMITS)) throw new ToolrelayError("INVALID_OPTIONS", `unknown call limit "${name}"`);
    const zeroAllowed = name === "reconnectGraceMs" || name === "resendWindowMs" || name === "maxForgottenCalls";
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < (zeroAllowed ? 0 : 1) || value > MAX_TIMER_DELAY_MS * 1_000) {
      throw new ToolrelayError("INVALID_OPTIONS", `${name} must be an integer >= ${zeroAllowed ? 0 : 1}, got ${String(value)}`);
    }
    resolved[name] = value;
  }
  return resolved;
}

/**
 * The table's one way out. `response`: write `detail` (the response body) for
 * `requestId` now and return the connection epoch it went out on, or
 * `undefined` when nothing was written (the link is down: it is held). The other
 * kinds report (return value ignored): `start` (the callback starts), `end` (the
 * call settled), `late` (`detail` is the outcome the callback produced after its
 * call had settled), `progress` (`detail` is the tool's message).
 */
export type CallTableOutput = (
  kind: "response" | "start" | "end" | "late" | "progress",
  /** The call; `undefined` only for a `response` that answers no call (after close). */
  record: CallRecord | undefined,
  requestId: string,
  detail?: unknown,
) => number | undefined;

export interface CallTableOptions {
  output: CallTableOutput;
  /** Bounds and per-call defaults, over {@link DEFAULT_CALL_LIMITS}. */
  limits?: Partial<CallLimits>;
  /** Timer source; inject fakes for exact tests. Default `systemTimers`. */
  timers?: Timers;
}

/** One `external_tool_call_request`, as the table sees it. */
export interface CallRequest {
  /** Delivery identity: the response frame echoes it. */
  requestId: string;
  /** The connection epoch the request arrived on. */
  epoch: number;
  /** Execution identity: at most one run per key. */
  key: CallKey;
  toolName: string;
  /** The tool, or `undefined` when the session has none by that name. */
  tool: ClientTool | undefined;
  /** The session's tool names (for the unknown-tool answer). */
  toolNames: () => string[];
  /** The arguments as received, and their size in UTF-8 bytes of canonical JSON. */
  input: unknown;
  inputBytes: number;
}

/**
 * What `request` did:
 * - `started`: a new call (it runs, or was refused by preflight);
 * - `reused`: a new call under a tool call id seen before with another input (it runs);
 * - `joined`: the same call is running; this request id gets its answer too;
 * - `replayed`: the call settled before; its cached answer was written (or held) for this request id;
 * - `resent`: this request id was answered on an older epoch and re-offered: the cached answer again;
 * - `expired`: the call ran but its outcome was forgotten: "outcome unknown" was written;
 * - `duplicate`: this request id already has (or waits for) its answer on this epoch: nothing written;
 * - `conflict`: this request id already stands for another call: answered with an error, nothing run;
 * - `busy`: `maxConcurrentCalls` calls are running: answered "busy", nothing run (its one outcome);
 * - `closed`: the table is closed: answered `cancelled`, nothing run.
 */
export type RequestDisposition =
  | "started"
  | "reused"
  | "joined"
  | "replayed"
  | "resent"
  | "expired"
  | "duplicate"
  | "conflict"
  | "busy"
  | "closed";
