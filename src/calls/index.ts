/**
 * calls/: execution identity, the pending-call table, the settlement policy
 * and the replay cache. No sockets.
 */
export { callKeyId, sameCallKey, type CallKey } from "./call-key.js";
export {
  expiredResponse,
  responseForOutcome,
  MAX_LISTED_INPUT_ISSUES,
  type CallOutcome,
  type CallOutcomeKind,
  type CancelledOutcome,
  type DisconnectedOutcome,
  type ResponseForOutcomeOptions,
  type TimeoutOutcome,
} from "./call-outcome.js";
export { ToolCallAbortError, describeAbortReason, type ToolCallAbortKind } from "./call-abort-reason.js";
export {
  ReplayCache,
  DEFAULT_REPLAY_MAX_AGE_MS,
  DEFAULT_REPLAY_MAX_ENTRIES,
  DEFAULT_REPLAY_MAX_TOMBSTONES,
  DEFAULT_REPLAY_TOMBSTONE_AGE_MS,
  type DeliveryState,
  type ReplayCacheOptions,
  type ReplayEntry,
  type ReplayLookup,
} from "./replay-cache.js";
export { CallTable } from "./call-table.js";
export {
  DEFAULT_RECONNECT_GRACE_MS,
  MAX_TIMER_DELAY_MS,
  type CallLateEvent,
  type CallRequest,
  type CallSettledEvent,
  type CallTableOptions,
  type RequestDisposition,
} from "./call-table-options.js";
export { isCallOutcome } from "./run-result.js";
export { MAX_REQUEST_IDS_PER_CALL } from "./running-call.js";
/** @internal Test-only planted bugs for the reliability suite; never set them outside tests. */
export { __plantedBugs, type PlantedBugs } from "./planted-bugs.js";
