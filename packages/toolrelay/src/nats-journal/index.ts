/**
 * `toolrelay/nats-journal`: the call journal in a NATS JetStream key-value bucket, shared by every
 * process that opens the bucket (see docs/call-journal.md). Needs the optional peer dependencies
 * `@nats-io/transport-node`, `@nats-io/jetstream` and `@nats-io/kv` (3.4.x), and nats-server 2.9 or
 * later with JetStream.
 */
export type { NatsCallJournal } from "./nats-call-journal.js";
export type { NatsCallJournalCommonOptions, NatsCallJournalOptions } from "./nats-call-journal-options.js";
export { openNatsCallJournal } from "./open-nats-call-journal.js";
