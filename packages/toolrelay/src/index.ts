/**
 * `toolrelay`: run a Letta Code agent's client tools in your own process. `createSession`
 * starts a runtime for an agent and conversation, registers your tools (`defineTool`) and
 * answers every tool call the runtime sends. See docs/getting-started.md.
 *
 * @module toolrelay
 */
export { createSession } from "./session/create-session.js";
export { Session, type MessageInput, type SendOptions } from "./session/session.js";
export { Turn, type TurnResult, type ToolOutput, type ToolOutputOfTools } from "./session/turn.js";
export type { TurnEvent, StreamEvent, ToolOwner } from "./session/turn-events.js";
export type { RuntimeError } from "./session/runtime-error.js";
export type { SessionOptions, BackendOptions, AgentOptions, PermissionMode } from "./session/session-options.js";
export type {
  SessionEvents,
  SessionListeners,
  ToolCallStartEvent,
  ToolCallEndEvent,
  ToolCallEndEventOf,
  SessionToolList,
  ToolCallLateEvent,
  ToolCallDuplicateEvent,
  ToolCallReusedEvent,
  ToolCallRefusedEvent,
  ForeignFrameEvent,
  ToolCallProgressEvent,
  ConnectionStateChangeEvent,
} from "./session/session-events.js";
export type { ApprovalRequest, ApprovalDecision } from "./session/approval-responder.js";
export type {
  LocalBackendOptions,
  LocalBackendSocketOptions,
  LocalBackendSpawnOptions,
  LocalBackendUrlOptions,
} from "./backends/local-backend.js";
export type { LocalLinkOptions } from "./transport/local-link.js";
export type { CloudBackendOptions } from "./backends/cloud-backend.js";
export type { CloudSandboxOptions, GithubRepository, SandboxCreateRoute } from "./backends/cloud-sandbox-options.js";
export type { ManagedSandboxInfo } from "./backends/managed-sandbox.js";
export type { SpawnLettaServerOptions } from "./backends/spawn-letta-server.js";
export { defineTool, fromAiSdkTools, textResult, errorResult } from "./tools/index.js";
export type {
  ClientTool,
  ToolDefinition,
  ToolDefinitionWithOutput,
  ToolAnnotations,
  ToolCallContext,
  ToolApprovalContext,
  NeedsApproval,
  ToModelOutput,
  ToolModelOutputCall,
  ToolOutputSchema,
  ToolOutputInputOf,
  ToolOutputOf,
  JsonSchemaDocument,
  ToolResult,
  ToolReturnValue,
  ToolInputSchema,
  ToolInputOf,
  JsonSchemaObject,
  InputIssue,
  InputValidation,
  ToolSource,
  OpenToolSource,
  AiSdkClientToolOf,
  AiSdkToolLike,
  AiSdkToolOutputOf,
  FromAiSdkToolsOptions,
} from "./tools/index.js";
export { defineToolSource } from "./tools/index.js";
export type {
  CallOutcome,
  CallKey,
  CallJournal,
  JournalEntry,
  JournalEntryState,
  JournalRetention,
  RecordedOutcome,
  OutcomeUnknownOutcome,
  JournalFailedOutcome,
} from "./calls/index.js";
export { DEFAULT_JOURNAL_RETENTION, MemoryCallJournal, type MemoryCallJournalOptions } from "./calls/index.js";
export {
  openFileCallJournal,
  FileCallJournal,
  MAX_LISTED_DROPPED_LINES,
  type FileCallJournalOptions,
  type FileJournalRecovery,
  type JournalLockOwner,
} from "./journal/index.js";
export { ToolCallAbortError } from "./tools/index.js";
export { ToolrelayError, isToolrelayError, type ToolrelayErrorCode } from "./errors.js";
export type { LinkState } from "./transport/runtime-link.js";
export type { Logger, LogFields } from "./observability/logger.js";
export type { TelemetryTracer, TelemetrySpan, TelemetryAttributes } from "./observability/telemetry.js";

// Types that appear in the public signatures above, exported so that callers can name them
// (checked by the API report, api/toolrelay.api.md, and TypeDoc's notExported validation).
// Each type through one statement only: a second statement reaching a declaration already named
// above (the same module, or the module behind a folder's index) was dropped from dist/index.d.ts
// by the declaration bundler (ToolsChangeEvent, CallLimits, ToolInputKind were missing).
export type { ExecutionOutcome } from "./tools/execute-tool.js";
export type { PreflightOutcome } from "./calls/call-outcome.js";
export type { TimeoutOutcome, CancelledOutcome, DisconnectedOutcome, BusyOutcome, DeniedOutcome } from "./calls/call-outcome.js";
export type { ToolCallAbortKind } from "./tools/index.js";
export type { ToolReturnObject } from "./tools/tool-result.js";
export type { ToolJsonSchema } from "./tools/tool-json-schema.js";
export type { ToolrelayErrorOptions } from "./errors.js";
export type { CloudAuthMode } from "./transport/cloud-status-address.js";
export type { BackoffOptions } from "./transport/backoff.js";
export type { CloudEnvironmentSelector } from "./backends/cloud-environment.js";
export type { Timers, TimerHandle } from "./internal/timers.js";
export type { WebSocketConstructor } from "./transport/open-web-socket.js";
export type { WireContentBlock } from "./wire/content.js";
export type { ToolInputKind, InputValidationOf } from "./tools/tool-input-schema.js";
export type { ToolsChangeEvent } from "./session/session-events.js";
export type { CallLimits } from "./calls/call-table-options.js";
