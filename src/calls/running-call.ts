/**
 * The record of one execution that has not settled yet (one per running
 * CallKey in the {@link CallTable}).
 */
import type { TimerHandle } from "../internal/timers.js";
import type { CallKey } from "./call-key.js";
import type { ToolAnnotations } from "./outcome-shapes.js";

export interface RunningCall {
  readonly key: CallKey;
  readonly keyId: string;
  readonly toolName: string;
  readonly annotations: ToolAnnotations | undefined;
  /** `Timers.now()` when the call started. */
  readonly startedAt: number;
  /** Its signal is the callback's signal. */
  readonly controller: AbortController;
  /** Request ids waiting for this call, first first; `false` once given up (their link is gone). */
  readonly waiters: Map<string, boolean>;
  /** The timeout timer, until cleanup. */
  timer: TimerHandle | undefined;
  /** The caller's signal while we watch it, until cleanup. */
  callerSignal: AbortSignal | undefined;
  /** Set once, synchronously, by the first settlement. */
  settled: boolean;
}

export interface RunningCallInit {
  key: CallKey;
  keyId: string;
  toolName: string;
  annotations: ToolAnnotations | undefined;
  requestId: string;
  startedAt: number;
}

export function createRunningCall(init: RunningCallInit): RunningCall {
  return {
    key: init.key,
    keyId: init.keyId,
    toolName: init.toolName,
    annotations: init.annotations,
    startedAt: init.startedAt,
    controller: new AbortController(),
    waiters: new Map([[init.requestId, true]]),
    timer: undefined,
    callerSignal: undefined,
    settled: false,
  };
}

/**
 * Most request ids remembered per call (waiting for a running call, or
 * answered by a cached one). The runtime mints one per attempt, so a handful is
 * normal; past this, the oldest is forgotten, which keeps a hostile peer from
 * growing one entry without bound. A forgotten waiter gets no response; a
 * forgotten answered id would be answered again if it ever came back.
 */
export const MAX_REQUEST_IDS_PER_CALL = 64;

/** Set `requestId` in `map` as its newest entry, forgetting the oldest past {@link MAX_REQUEST_IDS_PER_CALL}. */
export function rememberRequestId<T>(map: Map<string, T>, requestId: string, value: T): void {
  map.delete(requestId);
  map.set(requestId, value);
  while (map.size > MAX_REQUEST_IDS_PER_CALL) map.delete(map.keys().next().value as string);
}
