/** The bounds, options, requests and dispositions of a {@link CallTable} (call-table.ts). */
import type { Timers } from "../internal/timers.js";
import { DEFAULT_MAX_RESULT_CHARS, type ClientTool } from "../tools/index.js";
import type { ToolCallResponseBody } from "../wire/index.js";
import type { CallJournal } from "./call-journal.js";
import type { CallKey } from "./call-key.js";
import type { CallOutcome } from "./call-outcome.js";
import type { CallRecord } from "./call-record.js";

/** Every bound of the call table; `createSession` takes each one (see `SessionOptions`). */
export interface CallLimits {
  /** Calls running at once; past it a request is answered "busy" and not run. Default 256. */
  maxConcurrentCalls: number;
  /** Settled outcomes kept for replay. Default 1,024. */
  maxCachedCalls: number;
  /** Characters (text and image data) of all cached responses together. Default 8,388,608. */
  maxCachedChars: number;
  /** A cached outcome is forgotten this long after it settled (ms). Default 600,000 (10 min). */
  cacheAgeMs: number;
  /** Forgotten calls remembered by their request ids (a repeat is never run again). Default 4,096. */
  maxForgottenCalls: number;
  /** A forgotten call is let go this long after it settled (ms). Default 86,400,000 (24 h). */
  forgottenAgeMs: number;
  /** Characters of responses held for a lost link; past it a held result becomes a short error. Default 8,388,608. */
  maxHeldChars: number;
  /** Running calls survive a lost link this long (ms), then settle `disconnected`. Default 30,000. */
  reconnectGraceMs: number;
  /** After a reconnect where the runtime kept its calls, answers written this many ms before the loss are written again (`0`: never). Default 30,000. */
  resendWindowMs: number;
  /** Deadline of a tool without its own `timeoutMs` (ms). Default 60,000. */
  toolTimeoutMs: number;
  /**
   * How long a call that needs approval waits for the answer (ms); then it is not run and the model
   * reads that nobody answered. The runtime waits 300 s for the whole call, approval included: an
   * approved call's deadline is what is left of that, at most its `timeoutMs`. Default 120,000.
   */
  approvalTimeoutMs: number;
  /** Largest input, in UTF-8 bytes of its JSON. Default 1,048,576 (1 MiB). */
  maxInputBytes: number;
  /** Text results are clamped to this many characters. Default 32,000 (the runtime's own clamp). */
  maxResultChars: number;
  /** Longest `request_id`; a longer one is answered with an error and not kept. Default 256. */
  maxRequestIdChars: number;
  /** Longest `tool_call_id` (answered with an error past it). Default 512. */
  maxToolCallIdChars: number;
  /** Longest `tool_name` (answered with an error past it). Default 256. */
  maxToolNameChars: number;
}

export const DEFAULT_CALL_LIMITS: Readonly<CallLimits> = Object.freeze({
  maxConcurrentCalls: 256,
  maxCachedCalls: 1_024,
  maxCachedChars: 8_388_608,
  cacheAgeMs: 600_000,
  maxForgottenCalls: 4_096,
  forgottenAgeMs: 86_400_000,
  maxHeldChars: 8_388_608,
  reconnectGraceMs: 30_000,
  resendWindowMs: 30_000,
  toolTimeoutMs: 60_000,
  approvalTimeoutMs: 120_000,
  maxInputBytes: 1_048_576,
  maxResultChars: DEFAULT_MAX_RESULT_CHARS,
  maxRequestIdChars: 256,
  maxToolCallIdChars: 512,
  maxToolNameChars: 256,
});

/** `limits` over the defaults (checked once, by `createSession`'s option schema). */
export function resolveCallLimits(limits: Partial<CallLimits> = {}): CallLimits {
  const given = Object.entries(limits).filter(([, value]) => value !== undefined);
  return { ...DEFAULT_CALL_LIMITS, ...Object.fromEntries(given) };
}

/**
 * The table's one way out: one object for the table's life, a method per kind, so nothing is
 * allocated per call and nothing is cast. A method that throws changes nothing (the table's state
 * is already consistent; a response then counts as not written).
 */
export interface CallTableOutput {
  /**
   * Write `body` for `requestId`; the epoch it went out on, or `undefined` when it was not written
   * (it is held). `record` is `undefined` only for a response that answers no call (after close).
   */
  response(record: CallRecord | undefined, requestId: string, body: ToolCallResponseBody): number | undefined;
  /** The tool's callback is about to run (its input passed validation). */
  start(record: CallRecord, requestId: string): void;
  /** The call settled: `record.outcome` is its one outcome. */
  end(record: CallRecord, requestId: string): void;
  /** The callback's own outcome, after the call had settled otherwise (timeout, cancel, disconnect). */
  late(record: CallRecord, requestId: string, outcome: CallOutcome): void;
  /** The callback reported progress. */
  progress(record: CallRecord, requestId: string, message: string): void;
}

/**
 * `output` with each method guarded, made once per table: one that throws changes nothing (the
 * table's state is already consistent when it reports; a response then counts as not written).
 */
export function guardOutput(output: CallTableOutput): CallTableOutput {
  return {
    response(record, requestId, body) {
      try {
        return output.response(record, requestId, body);
      } catch {
        return undefined;
      }
    },
    start(record, requestId) {
      try {
        output.start(record, requestId);
      } catch {
        // a report that throws changes nothing
      }
    },
    end(record, requestId) {
      try {
        output.end(record, requestId);
      } catch {
        // a report that throws changes nothing
      }
    },
    late(record, requestId, outcome) {
      try {
        output.late(record, requestId, outcome);
      } catch {
        // a report that throws changes nothing
      }
    },
    progress(record, requestId, message) {
      try {
        output.progress(record, requestId, message);
      } catch {
        // a report that throws changes nothing
      }
    },
  };
}

/** A call that needs approval, as the table asks about it. */
export interface ApprovalAsk {
  record: CallRecord;
  tool: ClientTool;
  /** The validated input (what `execute` would get). */
  input: unknown;
  /** Aborted when the question is moot (the call was cancelled, timed out or the session closed). */
  signal: AbortSignal;
}

/** The answer to an {@link ApprovalAsk}: run it (with `input` in place of the asked one, if given), or not and why. */
export type ApprovalVerdict =
  | { approved: true; input?: unknown }
  | { approved: false; reason: "declined" | "no-approver" | "failed"; message: string };

export interface CallTableOptions {
  output: CallTableOutput;
  /**
   * Asked for every call whose tool's `needsApproval` says so; must not reject. Default: none
   * (such calls are denied `no-approver`).
   */
  approve?: ((ask: ApprovalAsk) => Promise<ApprovalVerdict>) | undefined;
  /** Bounds and per-call defaults over {@link DEFAULT_CALL_LIMITS}. */
  limits?: Partial<CallLimits> | undefined;
  /** Timer source; inject fakes for exact tests. Default `systemTimers`. */
  timers?: Timers | undefined;
  /**
   * Where each call is recorded before its callback runs and when it settles (call-journal.ts);
   * a call the journal already holds is answered from it and not run again. Default: none
   * (records live in this table only).
   */
  journal?: CallJournal | undefined;
}

/** One `external_tool_call_request` as the table sees it: `requestId` the response echoes; it is its own {@link CallKey} (at most one run per key). */
export interface CallRequest extends CallKey {
  requestId: string;
  /** The connection epoch it arrived on. */
  epoch: number;
  /**
   * The session's turn it arrived in (its client message id; `""` between turns). Default `""`.
   * A new request id with an answered call's key is that call again only within its turn and
   * after a reconnect (the runtime re-running a call whose answer it lost); else it is a new
   * model request. See docs/settlement.md, "What identifies a call".
   */
  turn?: string | undefined;
  toolName: string;
  /** The session's tool of that name, if any, and its tools (named in the unknown-tool answer). */
  tool: ClientTool | undefined;
  tools: { names(): string[] };
  /** The arguments as received, and their size in UTF-8 bytes of canonical JSON. */
  input: unknown;
  inputBytes: number;
}

/**
 * What `request` did (each in docs/settlement.md): a new call `started` (`reused`: its tool call id
 * was seen with another input; with a call journal the journal may still answer it: see the
 * `recorded` and `outcome-unknown` outcomes); `joined` the running call; `replayed` its cached answer; `resent`
 * it for a request id re-offered on a newer epoch; `expired` (ran, outcome forgotten); `duplicate`
 * (answered on this epoch: nothing written); `conflict` (the request id stands for another call: an
 * error, nothing run); `busy` (over `maxConcurrentCalls`: answered, not run); `closed` (answered cancelled).
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
