/** The reason a tool callback's `AbortSignal` fires: a {@link ToolCallAbortError} whose `kind` says why (never relabelled). */
const brand = Symbol.for("toolrelay.tool-call-abort-error");

/** Why the table aborted a call. */
export type ToolCallAbortKind = "timeout" | "cancelled" | "disconnected";

/** `signal.reason` of an aborted tool call; `name` is `"TimeoutError"` for a timeout, else `"AbortError"` (as the DOM's). */
export class ToolCallAbortError extends Error {
  readonly kind: ToolCallAbortKind;

  constructor(kind: ToolCallAbortKind, message: string) {
    super(message);
    this.kind = kind;
    this.name = kind === "timeout" ? "TimeoutError" : "AbortError";
    Object.defineProperty(this, brand, { value: true });
  }

  /** `instanceof` that also works across the ESM and CommonJS copies of the package (a `Symbol.for` brand). */
  static is(value: unknown): value is ToolCallAbortError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /** See {@link ToolCallAbortError.is}. */
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

  /** The link was lost and not back within the grace window (or the runtime forgot the call). */
  static disconnected(graceMs: number): ToolCallAbortError {
    const message = `The tool call was abandoned: the client lost its connection and it did not come back within ${graceMs} ms.`;
    return new ToolCallAbortError("disconnected", message);
  }
}
