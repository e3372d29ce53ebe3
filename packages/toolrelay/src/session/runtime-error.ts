/**
 * One runtime failure as the caller gets it: a readable message, and the runtime's own fields kept
 * apart. The real runtime (Letta Code 0.32) reports one failed run several ways — a non-terminal
 * `loop_error` whose `message` is the error as a JSON document (`{"error":{"error":{"type":…}}}`) and
 * whose `api_error` is the structured error, an `error_message` delta with the same error, the
 * `turn_finished` frame's `error` (the JSON document again), and a terminal `loop_error` after the
 * end (docs/protocol.md#stream_delta). This file turns each of them into the same
 * {@link RuntimeError}; the turn keeps one per failure.
 */

/** The runtime's error, taken apart: what a turn's `error` event carries besides its `message`. */
export interface RuntimeError {
  /** A readable message: the runtime's own text, never a JSON document. */
  message: string;
  /** The runtime's error class (`llm_error`, `internal_error`, ...), when it gave one. */
  errorType?: string | undefined;
  /** The runtime's detail text, when it gave one different from `message`. */
  detail?: string | undefined;
  /** The run that failed, when the runtime named it. */
  runId?: string | undefined;
}

/** At most this many levels of `{"error": …}` are looked into. */
const MAX_NESTING = 4;

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/** The innermost `{ message, type, detail, run_id }` of an error object (`{error: {error: {...}}}`), or undefined. */
function errorObjectOf(value: unknown, runId: string | undefined, depth = 0): RuntimeError | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value) || depth > MAX_NESTING) return undefined;
  const fields = value as Record<string, unknown>;
  const ownRunId = text(fields.run_id) ?? runId;
  const inner = errorObjectOf(fields.error, ownRunId, depth + 1);
  if (inner) return inner;
  const message = text(fields.message) ?? text(fields.detail) ?? text(fields.error);
  if (message === undefined) return undefined;
  return build(message, text(fields.type) ?? text(fields.error_type), text(fields.detail), ownRunId);
}

function build(message: string, errorType: string | undefined, detail: string | undefined, runId: string | undefined): RuntimeError {
  const error: RuntimeError = { message };
  if (errorType !== undefined) error.errorType = errorType;
  if (detail !== undefined && detail !== message) error.detail = detail;
  if (runId !== undefined) error.runId = runId;
  return error;
}

/** A text the runtime gave as an error: a JSON document of an error is taken apart; any other text is the message. */
export function runtimeErrorFromText(raw: string, runId?: string): RuntimeError {
  const trimmed = raw.trim();
  if (trimmed.startsWith("{")) {
    try {
      const parsed = errorObjectOf(JSON.parse(trimmed), runId);
      if (parsed) return parsed;
    } catch {
      // Not JSON after all: the text is the message.
    }
  }
  return build(trimmed === "" ? "runtime error" : raw, undefined, undefined, runId);
}

/** The error of an `error_message` or `loop_error` delta (its `api_error` when it has one: the structured copy). */
export function runtimeErrorFromDelta(fields: Record<string, unknown>, fallback: string): RuntimeError {
  const runId = text(fields.run_id);
  const structured = errorObjectOf(fields.api_error, runId);
  if (structured) return structured;
  const message = text(fields.message);
  if (message === undefined) return build(fallback, text(fields.error_type), text(fields.detail), runId);
  const fromText = runtimeErrorFromText(message, runId);
  return build(fromText.message, text(fields.error_type) ?? fromText.errorType, text(fields.detail) ?? fromText.detail, fromText.runId);
}

/** Whether two reports are the same failure: the same message, from the same run (or one of them names none). */
export function sameFailure(a: RuntimeError, b: RuntimeError): boolean {
  return a.message === b.message && (a.runId === undefined || b.runId === undefined || a.runId === b.runId);
}
