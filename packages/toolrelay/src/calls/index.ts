/** calls/: execution identity, the call record and its table, the settlement policy. No sockets. */
export { idempotencyKeyOf, inputDigest, sameCall, sameScope, type CallKey } from "./call-key.js";
export {
  deniedText,
  expiredResponse,
  outcomeUnknownText,
  responseForOutcome,
  MAX_LISTED_INPUT_ISSUES,
  type CallOutcome,
  type DeniedOutcome,
  type JournalFailedOutcome,
  type OutcomeUnknownOutcome,
  type RecordedOutcome,
  type PreflightOutcome,
} from "./call-outcome.js";
export { CallRecord, type CallState, type Delivery, type DeliveryState } from "./call-record.js";
export { MAX_INPUTS_PER_TOOL_CALL_ID, MAX_REQUEST_IDS_PER_CALL } from "./call-store.js";
export { CallTable } from "./call-table.js";
export {
  DEFAULT_CALL_LIMITS,
  type ApprovalAsk,
  type ApprovalVerdict,
  type CallLimits,
  type CallRequest,
  type CallTableOptions,
  type CallTableOutput,
  type RequestDisposition,
} from "./call-table-options.js";
export {
  DEFAULT_JOURNAL_RETENTION,
  journalInputDigest,
  type CallJournal,
  type JournalEntry,
  type JournalEntryState,
  type JournalRetention,
} from "./call-journal.js";
export { MemoryCallJournal, type MemoryCallJournalOptions } from "./memory-call-journal.js";
