/**
 * The reason a tool callback's `AbortSignal` fires, when the table aborts it:
 * `signal.reason` is a {@link ToolCallAbortError} whose `kind` says why. When
 * the caller's own signal fired, the caller's `signal.reason` is passed through
 * unchanged instead (never relabelled).
 */
const brand = Symbol.for("toolrelay.tool-call-abort-error");

/** Why the table aborted a call. */
export type ToolCallAbortKind = "timeout" | "cancelled" | "disconnected";

/**
 * `signal.reason` of an aborted tool call. `name` is `"TimeoutError"` for a
 * timeout and `"AbortError"` otherwise, like the DOM's own abort reasons, so
 * code that checks `error.name` keeps working.
 */
export class ToolCallAbortError extends Error {
  readonly kind: ToolCallAbortKind;

  constructor(kind: ToolCallAbortKind, message: string = defaultMessage(kind)) {
    super(message);
    this.kind = kind;
    this.name = kind === "timeout" ? "TimeoutError" : "AbortError";
    Object.defineProperty(this, brand, { value: true });
  }

  /** `instanceof` that also works across the ESM and CJS copies of the package. */
  static is(value: unknown): value is ToolCallAbortError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return ToolCallAbortError.is(value);
  }

  /** The call ran past its deadline. */
  static timeout(timeoutMs: number): ToolCallAbortError {
    return new ToolCallAbortError("timeout", `The tool call timed out after ${timeoutMs} ms.`);
  }

  /** The turn was aborted or the session closed. */
  static cancelled(reason: string): ToolCallAbortError {
    return new ToolCallAbortError("cancelled", `The tool call was cancelled: ${reason}`);
  }

  /** The link was lost and did not come back within the grace window. */
  static disconnected(graceMs: number): ToolCallAbortError {
    return new ToolCallAbortError(
      "disconnected",
      `The tool call was abandoned: the client lost its connection and it did not come back within ${graceMs} ms.`,
    );
  }
}

function defaultMessage(kind: ToolCallAbortKind): string {
  if (kind === "timeout") return "The tool call timed out.";
  if (kind === "cancelled") return "The tool call was cancelled.";
  return "The tool call was abandoned: the client lost its connection.";
}

/** A short text for an abort reason of any type (for outcomes and logs; never the reason's data). */
export function describeAbortReason(reason: unknown): string {
  if (reason instanceof Error && reason.message !== "") return reason.message;
  if (typeof reason === "string" && reason !== "") return reason;
  return "the caller's signal was aborted";
}
