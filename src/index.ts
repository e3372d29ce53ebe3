export { createSession } from "./session/create-session.js";
export { Session, type MessageInput, type SendOptions } from "./session/session.js";
export { Turn, type TurnResult } from "./session/turn.js";
export type { TurnEvent, StreamEvent, ToolOwner } from "./session/turn-events.js";
export type { SessionOptions, BackendOptions, AgentOptions, PermissionMode, LinkBackendOptions } from "./session/session-options.js";
export type {
  SessionEvents,
  ToolCallStartEvent,
  ToolCallEndEvent,
  ToolCallLateEvent,
  ToolCallDuplicateEvent,
  ToolCallReusedEvent,
  ToolCallRefusedEvent,
  ForeignFrameEvent,
  ToolCallProgressEvent,
  ConnectionStateChangeEvent,
} from "./session/session-events.js";
export type { ApprovalRequest, ApprovalDecision } from "./session/approval-responder.js";
export type { LocalBackendOptions } from "./backends/local-backend.js";
export type { CloudBackendOptions } from "./backends/cloud-backend.js";
export type { SpawnLettaServerOptions } from "./backends/spawn-letta-server.js";
export { defineTool, fromAiSdkTools, textResult, errorResult } from "./tools/index.js";
export type {
  ClientTool,
  ToolDefinition,
  ToolAnnotations,
  ToolCallContext,
  ToolResult,
  ToolReturnValue,
  ToolInputSchema,
  ToolInputOf,
  JsonSchemaObject,
  InputIssue,
  InputValidation,
  ToolSource,
  OpenToolSource,
  AiSdkToolLike,
  FromAiSdkToolsOptions,
} from "./tools/index.js";
export { defineToolSource } from "./tools/index.js";
export type { CallOutcome, CallKey } from "./calls/index.js";
export { ToolCallAbortError } from "./calls/index.js";
export { ToolrelayError, isToolrelayError, type ToolrelayErrorCode } from "./errors.js";
export type { LinkState, RuntimeLink } from "./transport/runtime-link.js";
