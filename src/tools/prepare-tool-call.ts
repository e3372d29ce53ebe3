/**
 * Preflight of one tool call, before its input is validated or its callback
 * runs: is there such a tool, is the input within the size limit. Pure and
 * synchronous; a refusal is an outcome, never an exception.
 */
import type { ClientTool } from "./define-tool.js";
import type { InputIssue } from "./input-issues.js";

/** Default of `maxInputBytes`: 1 MiB. */
export const DEFAULT_MAX_INPUT_BYTES = 1_048_576;

/** A call refused before its callback ran. */
export type PreflightOutcome =
  | { kind: "unknown-tool"; toolName: string; available: string[] }
  | { kind: "input-too-large"; bytes: number; limit: number }
  | { kind: "invalid-input"; issues: InputIssue[] };

/** What preflight reads of a request. */
export interface PreflightRequest {
  /** The tool the runtime asked for. */
  toolName: string;
  /** The input's size in UTF-8 bytes of its JSON. */
  inputBytes: number;
  /** The session's tool names, for the unknown-tool answer. */
  toolNames(): string[];
}

/** The refusal of a call, or `undefined` when it may go on to validation: unknown tool first, then size. */
export function preflightToolCall(
  tool: ClientTool | undefined,
  request: PreflightRequest,
  maxInputBytes: number,
): PreflightOutcome | undefined {
  if (tool === undefined) return { kind: "unknown-tool", toolName: request.toolName, available: request.toolNames() };
  if (request.inputBytes > maxInputBytes) return { kind: "input-too-large", bytes: request.inputBytes, limit: maxInputBytes };
  return undefined;
}
