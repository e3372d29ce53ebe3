/**
 * The one error class of toolrelay. Every error the SDK throws or emits is a
 * {@link ToolrelayError} with a stable string {@link ToolrelayErrorCode}; the
 * codes are listed in `docs/errors.md`. A tool that throws is *not* an error
 * of the session: it becomes a `tool-error` result for the model.
 */
const brand = Symbol.for("toolrelay.error");

/** Stable error codes. Never renamed; new ones are only added. */
export type ToolrelayErrorCode =
  /** A tool definition is invalid (name, schema, options). Thrown by `defineTool`. */
  | "INVALID_TOOL_DEFINITION"
  /** Two tools in one session share a name. */
  | "DUPLICATE_TOOL_NAME"
  /**
   * A client tool takes the name of one of the runtime's own tools (`Read`, `Bash`, ...) without
   * `overridesRuntimeTool: true`. Thrown by `defineTool`; `details.name` is the name.
   */
  | "RESERVED_TOOL_NAME"
  /** Options passed to `createSession` or another public function are invalid. */
  | "INVALID_OPTIONS"
  /** The socket could not be opened, or the handshake was refused. */
  | "CONNECT_FAILED"
  /** The server refused the credentials (HTTP 401/403 on upgrade, or REST 401/403). */
  | "UNAUTHORIZED"
  /** The runtime did not answer a request before its deadline. */
  | "REQUEST_TIMEOUT"
  /** The runtime answered a request with `success: false` (a missing agent or conversation is `NOT_FOUND`). */
  | "REQUEST_FAILED"
  /** The link closed while a request was waiting for its answer. */
  | "CONNECTION_CLOSED"
  /** The session (or turn) was closed or aborted by the caller. */
  | "ABORTED"
  /** The backend cannot route client tools (for example an old runtime). */
  | "UNSUPPORTED_BACKEND"
  /** A local `letta server --listen` process could not be started. */
  | "SPAWN_FAILED"
  /** A turn is already running in this session. */
  | "TURN_IN_PROGRESS"
  /** The runtime ended the turn with an error. */
  | "TURN_FAILED"
  /** A frame could not be encoded (outbound validation failed). */
  | "INVALID_FRAME"
  /** A Letta REST call failed. */
  | "REST_FAILED"
  /**
   * Something the options name does not exist where they point, on every backend: the agent, the
   * conversation, the cloud environment, or the address's path (HTTP 404 on the upgrade).
   */
  | "NOT_FOUND"
  /** An event listener of the caller (or of the session on a link) threw; the link stayed up. */
  | "LISTENER_FAILED"
  /** A callback the caller supplied (such as `canUseTool`) threw; the SDK answered safely in its place. */
  | "CALLBACK_FAILED"
  /**
   * The link dropped after a message was written and before the runtime confirmed it: the runtime
   * may or may not have received it. Retryable — look at the conversation before sending it again.
   */
  | "INPUT_UNCONFIRMED"
  /** A bug in toolrelay (an error it did not expect). The `cause` has the original; please report it. */
  | "INTERNAL"
  /** A call journal file is held by another live process (`details.path`, `details.owner`): one process per journal file. */
  | "JOURNAL_LOCKED"
  /** A call journal could not write or read (a full disk, a lost NATS server): the call it was for is not run. `cause` has the original. */
  | "JOURNAL_FAILED"
  /** A tool source (an MCP server) failed to start or list its tools, or stopped; its tools answer an error. */
  | "TOOL_SOURCE_FAILED"
  /**
   * The session's SDK-managed cloud sandbox is gone (its TTL ran out, or it was terminated): the
   * turn fails before its message is written. `details.conversationId` is the conversation to
   * resume in a new session.
   */
  | "SANDBOX_EXPIRED"
  /**
   * The SDK-managed cloud sandbox did not come online (its listener connected) within
   * `readyTimeoutMs`; `details.waitedMs` says how long the SDK waited.
   */
  | "SANDBOX_NOT_READY";

/** What a {@link ToolrelayError} carries besides its code and message. */
export interface ToolrelayErrorOptions {
  cause?: unknown;
  /** Extra machine-readable details (never credentials). */
  details?: Record<string, unknown> | undefined;
}

/**
 * Every error toolrelay throws or reports: a stable string `code` (see docs/errors.md), a message
 * with no credential in it, the `cause`, and `details` for some codes.
 */
export class ToolrelayError extends Error {
  readonly code: ToolrelayErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ToolrelayErrorCode, message: string, options: ToolrelayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ToolrelayError";
    this.code = code;
    this.details = options.details;
    Object.defineProperty(this, brand, { value: true });
  }

  /** `instanceof` that also works across the ESM and CJS copies of the package. */
  static is(value: unknown): value is ToolrelayError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /** `instanceof` across the ESM and CommonJS copies of the package (a `Symbol.for` brand). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return ToolrelayError.is(value);
  }
}

/** Narrow an unknown error to one code: `isToolrelayError(error, "REQUEST_TIMEOUT")`. */
export function isToolrelayError(value: unknown, code?: ToolrelayErrorCode): value is ToolrelayError {
  return ToolrelayError.is(value) && (code === undefined || value.code === code);
}

/** A `ToolrelayError` as it is; anything else thrown becomes one with code `INTERNAL` (the original as its `cause`). */
export function asToolrelayError(error: unknown): ToolrelayError {
  if (isToolrelayError(error)) return error;
  return new ToolrelayError("INTERNAL", `unexpected error: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}
