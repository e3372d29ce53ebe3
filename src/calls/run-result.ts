/**
 * Turn whatever a call's `run` produced into a {@link CallOutcome}. `run`
 * should resolve with an outcome and never reject; if it throws, rejects, or
 * resolves with something that is not an outcome, that is a `tool-error`.
 */
import type { CallOutcome, CallOutcomeKind } from "./call-outcome.js";

const outcomeKinds: ReadonlySet<CallOutcomeKind> = new Set<CallOutcomeKind>([
  "ok",
  "tool-error",
  "invalid-input",
  "unknown-tool",
  "input-too-large",
  "timeout",
  "cancelled",
  "disconnected",
]);

/** True for an object with a known outcome `kind`. */
export function isCallOutcome(value: unknown): value is CallOutcome {
  if (typeof value !== "object" || value === null) return false;
  const kind = (value as { kind?: unknown }).kind;
  return typeof kind === "string" && outcomeKinds.has(kind as CallOutcomeKind);
}

/** The outcome of a `run` that resolved with `value`. */
export function outcomeFromRunValue(toolName: string, value: unknown): CallOutcome {
  if (isCallOutcome(value)) return value;
  return toolError(`Tool ${toolName} failed: it produced no result.`);
}

/** The outcome of a `run` that threw or rejected with `error`. */
export function outcomeFromRunFailure(toolName: string, error: unknown): CallOutcome {
  return toolError(`Tool ${toolName} failed: ${describeError(error)}`);
}

/** True when `value` has a callable `then`. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message === "" ? error.name : error.message;
  if (typeof error === "string" && error !== "") return error;
  return "unknown error";
}

function toolError(message: string): CallOutcome {
  return { kind: "tool-error", message, content: [{ type: "text", text: message }] };
}

/**
 * Call `run` and hand its outcome to `finish` exactly once: at once when it
 * returns an outcome or throws, later when it returns a promise. Never throws
 * and never leaves a rejected promise unhandled (as long as `finish` does not throw).
 */
export function invokeRun(
  toolName: string,
  run: (signal: AbortSignal) => Promise<CallOutcome> | CallOutcome,
  signal: AbortSignal,
  finish: (outcome: CallOutcome) => void,
): void {
  let result: unknown;
  try {
    result = run(signal);
  } catch (error) {
    finish(outcomeFromRunFailure(toolName, error));
    return;
  }
  if (!isPromiseLike(result)) {
    finish(outcomeFromRunValue(toolName, result));
    return;
  }
  Promise.resolve(result).then(
    (value) => finish(outcomeFromRunValue(toolName, value)),
    (error: unknown) => finish(outcomeFromRunFailure(toolName, error)),
  );
}
