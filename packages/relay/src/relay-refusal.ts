/**
 * What the relay refuses, and how a refused SDK command is answered: with the command's own
 * response frame carrying `success: false` (or `accepted: false`) and an `error` that starts
 * with `relay:`, so the SDK's request fails at once with a clear reason instead of timing out.
 * Commands without a `request_id`, and tool answers, have no response: they are dropped (and
 * reported as a `refused` event).
 */
import { RelayFrame } from "./relay-frame.js";

/** Every kind of refusal the relay reports in its `refused` event. */
export type RefusalKind =
  /** An SDK or listener socket (or a test hook) for an environment that does not exist or is another tenant's. */
  | "environment-not-found"
  /** A listener socket without `deviceId`, or with another device's. */
  | "wrong-device"
  /** A registration of a device another tenant registered. */
  | "device-of-another-tenant"
  /** A `sessionId` (or runtime identity) bound to another key, or to another runtime than the URL names. */
  | "session-bound-elsewhere"
  /** A command for a runtime the session is not bound to. */
  | "foreign-runtime"
  /** An `external_tool_call_response` from a session that does not own the call. */
  | "not-call-owner"
  /** A command whose `request_id` another session's request already uses. */
  | "request-id-in-use"
  /** A tenant cap (environments, sessions, outstanding calls, sandboxes). */
  | "tenant-limit"
  /** The environment's command queue is full while its listener reconnects. */
  | "queue-full"
  /** A sandbox's device registered by another key, or a sandbox's key used for anything but its own listener. */
  | "sandbox-device"
  /** A key without the role the route or socket needs (an SDK key posing as a listener, or the reverse). */
  | "key-role"
  /** A sandbox request that is malformed, names no such sandbox (or another tenant's), or is sent to a relay without sandboxes. */
  | "sandbox-refused";

/** Why the relay refused an attempt (the `refused` event): a connection, a frame or a sandbox request. */
export interface RelayRefusal {
  kind: RefusalKind;
  /** The tenant that made the refused attempt (undefined before authentication). */
  tenant: string | undefined;
  connectionId: string | undefined;
  reason: string;
}

/** Response frames for the commands that have one (docs/protocol.md, frame catalogue). */
const RESPONSES: Record<string, (requestId: string, error: string) => Record<string, unknown>> = {
  runtime_start: (request_id, error) => ({ type: "runtime_start_response", request_id, success: false, runtime: null, error }),
  runtime_external_tools_update: (request_id, error) => ({
    type: "runtime_external_tools_update_response",
    request_id,
    success: false,
    error,
  }),
  sync: (request_id, error) => ({ type: "sync_response", request_id, success: false, error }),
  abort_message: (request_id, error) => ({ type: "abort_message_response", request_id, aborted: false, success: false, error }),
  input: (request_id, error) => ({ type: "input_accepted", request_id, accepted: false, error }),
  app_server_info: (request_id, error) => ({ type: "app_server_info_response", request_id, success: false, error }),
};

/** The response that tells the sender its command was refused; `undefined` when the command has none. */
export function refusalResponse(command: RelayFrame, error: string): RelayFrame | undefined {
  const build = RESPONSES[command.type];
  if (!build || command.requestId === undefined) return undefined;
  return RelayFrame.read(JSON.stringify(build(command.requestId, error)));
}
