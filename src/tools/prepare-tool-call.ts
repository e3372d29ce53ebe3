/**
 * Preflight of one tool call, before any callback runs: is there such a tool,
 * is the input within the size limit, does it pass the tool's schema. Pure,
 * and synchronous whenever the tool's validator is (only an async Standard
 * Schema makes it a promise); refusals are outcomes, never exceptions.
 */
import { ToolrelayError } from "../errors.js";
import type { ClientTool } from "./define-tool.js";
import type { InputIssue, InputValidation } from "./input-issues.js";
import type { ToolLookup } from "./tool-registry.js";

/** Default of `maxInputBytes`: 1 MiB. */
export const DEFAULT_MAX_INPUT_BYTES = 1_048_576;

/** A call refused before its callback ran. */
export type PreflightOutcome =
  | { kind: "unknown-tool"; toolName: string; available: string[] }
  | { kind: "input-too-large"; bytes: number; limit: number }
  | { kind: "invalid-input"; issues: InputIssue[] };

export interface ToolCallRequest {
  /** The tool the runtime asked for. */
  toolName: string;
  /** The arguments as received (already JSON-decoded). */
  input: unknown;
  /** The input's size in UTF-8 bytes when known (e.g. measured on the raw frame). Default: measured from `JSON.stringify(input)`. */
  inputBytes?: number;
}

export interface PrepareToolCallOptions {
  /** Largest accepted input in UTF-8 bytes of its JSON; a larger one is refused unread. Default 1_048_576 (1 MiB). */
  maxInputBytes?: number;
}

export type PreparedToolCall = { ok: true; tool: ClientTool; input: unknown } | { ok: false; outcome: PreflightOutcome };

/**
 * Check a call in this order: unknown tool, input size, schema. On success,
 * `input` is the schema's parsed output — what `execute` receives. Nothing
 * strips or refuses arguments before the schema sees them. Throws only for an
 * invalid `maxInputBytes` (`ToolrelayError("INVALID_OPTIONS")`).
 */
export function prepareToolCall(
  registry: ToolLookup,
  request: ToolCallRequest,
  options: PrepareToolCallOptions = {},
): PreparedToolCall | Promise<PreparedToolCall> {
  const limit = options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new ToolrelayError("INVALID_OPTIONS", `maxInputBytes must be a positive integer, got ${String(limit)}`);
  }
  const tool = registry.get(request.toolName);
  if (tool === undefined) {
    return { ok: false, outcome: { kind: "unknown-tool", toolName: request.toolName, available: registry.names() } };
  }
  const bytes = request.inputBytes ?? jsonByteLength(request.input);
  if (bytes > limit) return { ok: false, outcome: { kind: "input-too-large", bytes, limit } };
  const validation = tool.validateInput(request.input);
  return isPromiseLike(validation) ? validation.then((settled) => prepared(tool, settled)) : prepared(tool, validation);
}

function prepared(tool: ClientTool, validation: InputValidation): PreparedToolCall {
  if (!validation.ok) return { ok: false, outcome: { kind: "invalid-input", issues: validation.issues } };
  return { ok: true, tool, input: validation.value };
}

function isPromiseLike(value: InputValidation | Promise<InputValidation>): value is Promise<InputValidation> {
  return typeof (value as { then?: unknown }).then === "function";
}

/** UTF-8 byte length of `JSON.stringify(value)`; 0 when it has no JSON form. */
export function jsonByteLength(value: unknown): number {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return 0;
  }
  return text === undefined ? 0 : utf8ByteLength(text);
}

/** UTF-8 byte length of a string (a lone surrogate counts as its 3-byte replacement). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        index++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
