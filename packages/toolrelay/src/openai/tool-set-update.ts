/**
 * Replace a session's client tools with a request's and wait until the runtime confirmed them:
 * the session re-registers a changed set by itself (`runtime_external_tools_update`) and emits
 * `tools-change` once the runtime answered; a refusal or a lost link is an `error` event. A
 * request's turn must not start before its tools are registered, or the model would be offered
 * the previous request's.
 */
import type { ToolrelayError } from "../errors.js";
import type { Timers } from "../internal/timers.js";
import type { Session } from "../session/session.js";
import { ChatApiError } from "./chat-api-error.js";
import type { ChatTool } from "./chat-request.js";
import type { ClientToolSet } from "./client-tool-set.js";

/** The error codes that mean the re-registration itself failed. */
const REGISTRATION_FAILURES = new Set(["REQUEST_FAILED", "REQUEST_TIMEOUT", "CONNECTION_CLOSED"]);

/** Resolves when `tools` are registered (at once when nothing changed); rejects with a 400 for a tool that cannot be offered, a 502 when the runtime did not take them. */
export async function updateSessionTools(
  session: Session,
  set: ClientToolSet,
  tools: readonly ChatTool[],
  options: { timers: Timers; timeoutMs: number },
): Promise<void> {
  const { timers, timeoutMs } = options;
  let cleanup = (): void => {};
  // Listen before the update: the session starts re-registering inside it.
  const confirmed = new Promise<void>((resolve, reject) => {
    const onChange = (): void => {
      cleanup();
      resolve();
    };
    const onError = (error: ToolrelayError): void => {
      if (!REGISTRATION_FAILURES.has(error.code)) return;
      cleanup();
      reject(ChatApiError.upstream(`the runtime did not take the new tool set: ${error.message}`, error));
    };
    const timer = timers.setTimeout(() => {
      cleanup();
      reject(ChatApiError.upstream(`the runtime did not confirm the new tool set within ${timeoutMs} ms`));
    }, timeoutMs);
    session.on("tools-change", onChange);
    session.on("error", onError);
    cleanup = () => {
      timers.clearTimeout(timer);
      session.off("tools-change", onChange);
      session.off("error", onError);
    };
  });
  let changed: boolean;
  try {
    changed = set.update(tools);
  } catch (error) {
    cleanup();
    throw error;
  }
  if (!changed) return cleanup();
  await confirmed;
}
