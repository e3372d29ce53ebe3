/**
 * `toolrelay/nats-journal`: the call journal in a NATS JetStream key-value bucket, shared by every
 * process that opens the bucket (see docs/call-journal.md). Needs the optional peer dependencies
 * `@nats-io/transport-node`, `@nats-io/jetstream` and `@nats-io/kv` (3.4.x), and nats-server 2.9 or
 * later with JetStream.
 */
export type {
  NatsCallJournal,
  NatsCallJournalCommonOptions,
  NatsCallJournalOptions,
  NatsConnectionLike,
} from "./nats-call-journal-options.js";
export type { CallJournal, JournalEntry, JournalEntryState, JournalRetention } from "../calls/index.js";
export type { TimerHandle, Timers } from "../internal/timers.js";
export type { ToolCallResponseBody, ToolCallResult, WireContentBlock } from "../wire/index.js";
export { openNatsCallJournal } from "./open-nats-call-journal.js";
