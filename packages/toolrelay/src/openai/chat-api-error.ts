/**
 * An error the bridge answers an HTTP request with, in the shape OpenAI clients read:
 * `{ "error": { "message", "type", "code", "param" } }`. The `openai` npm client turns it into an
 * `APIError` with `status`, `code` and `type` set. Messages never contain a credential, a tool
 * input or a tool result.
 */
import { isToolrelayError } from "../errors.js";

/** The `error.type` values the bridge uses (OpenAI's names where one exists). */
export type ChatApiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "conflict_error"
  | "rate_limit_error"
  | "server_error";

/** The body of an error answer. */
export interface ChatApiErrorBody {
  /** What went wrong: a readable `message`, OpenAI's `type`, a stable `code` and the request field (`param`) it concerns, if any. */
  error: { message: string; type: ChatApiErrorType; code: string; param: string | null };
}

export class ChatApiError extends Error {
  readonly status: number;
  readonly type: ChatApiErrorType;
  /** A stable code, listed in docs/openai-bridge.md ("Errors"). */
  readonly code: string;
  readonly param: string | null;

  constructor(
    status: number,
    type: ChatApiErrorType,
    code: string,
    message: string,
    options: { param?: string | undefined; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ChatApiError";
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = options.param ?? null;
  }

  /** A 400 for a request the bridge cannot take as it is. */
  static invalid(code: string, message: string, param?: string): ChatApiError {
    return new ChatApiError(400, "invalid_request_error", code, message, param === undefined ? {} : { param });
  }

  /** A 502: the agent behind the bridge failed (the runtime, its link, its model). */
  static upstream(message: string, cause?: unknown): ChatApiError {
    return new ChatApiError(502, "server_error", "upstream_error", message, { cause });
  }

  /** A 409: one request per thread at a time. */
  static threadBusy(threadId: string): ChatApiError {
    return new ChatApiError(
      409,
      "conflict_error",
      "thread_busy",
      `thread ${threadId} is answering another request; send one request at a time`,
    );
  }

  toBody(): ChatApiErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

/** Any error as a {@link ChatApiError} (an unexpected one becomes a 500 `internal_error`). */
export function asChatApiError(error: unknown): ChatApiError {
  if (error instanceof ChatApiError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ChatApiError(500, "server_error", "internal_error", `the bridge failed: ${message}`, { cause: error });
}

/** An error's message, with its toolrelay code when it has one. */
export function describeError(error: unknown): string {
  if (isToolrelayError(error)) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
