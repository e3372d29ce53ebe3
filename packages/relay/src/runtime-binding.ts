/**
 * Which runtime an SDK session belongs to. A session learns it from its socket URL (`agentId`
 * and `conversationId`), or — when the URL lacks the conversation (a new conversation) or the
 * agent (a new agent) — from the successful `runtime_start_response` to a `runtime_start` it
 * sent itself. Once bound, a session receives the frames and tool calls of exactly that runtime
 * and may only send commands for it. Pure: no sockets, no clocks. See docs/relay.md "Ownership".
 */
import { runtimeKeyOf } from "./relay-frame.js";

export type RuntimeBinding =
  | { readonly state: "open" }
  | { readonly state: "agent"; readonly agentId: string }
  | { readonly state: "bound"; readonly agentId: string; readonly conversationId: string; readonly runtimeKey: string };

export const OPEN_BINDING: RuntimeBinding = { state: "open" };

export function boundTo(agentId: string, conversationId: string): RuntimeBinding {
  return { state: "bound", agentId, conversationId, runtimeKey: runtimeKeyOf(agentId, conversationId) };
}

/** The binding a socket URL asks for. */
export function bindingFromUrl(agentId: string | undefined, conversationId: string | undefined): RuntimeBinding {
  if (agentId === undefined) return OPEN_BINDING;
  return conversationId === undefined ? { state: "agent", agentId } : boundTo(agentId, conversationId);
}

/**
 * A socket URL for an existing session: the session's binding, narrowed by the URL, or
 * `undefined` when the URL names another agent or runtime than the session's.
 */
export function mergeBinding(current: RuntimeBinding, url: RuntimeBinding): RuntimeBinding | undefined {
  if (url.state === "open") return current;
  if (current.state === "open") return url;
  if (current.agentId !== url.agentId) return undefined;
  if (current.state === "agent") return url;
  if (url.state === "agent") return current;
  return current.conversationId === url.conversationId ? current : undefined;
}

/** Whether a session with `binding` may send commands for, and receive frames of, `runtimeKey`. */
export function admitsRuntime(binding: RuntimeBinding, runtimeKey: string): boolean {
  return binding.state === "bound" && binding.runtimeKey === runtimeKey;
}

/**
 * Whether a session with `binding` may send a `runtime_start` for `agentId` / `conversationId`
 * (either may be absent: create an agent, create a conversation). Returns the refusal reason.
 */
export function refuseStart(binding: RuntimeBinding, agentId: string | undefined, conversationId: string | undefined): string | undefined {
  if (binding.state === "open") return undefined;
  if (agentId !== binding.agentId) return "runtime_start names another agent than this session is bound to";
  if (binding.state === "bound" && conversationId !== binding.conversationId) {
    return "runtime_start names another conversation than this session is bound to";
  }
  return undefined;
}

/** The binding after the runtime answered a `runtime_start` of the session with `runtime`; `undefined` on a conflict. */
export function bindRuntime(binding: RuntimeBinding, agentId: string, conversationId: string): RuntimeBinding | undefined {
  return mergeBinding(binding, boundTo(agentId, conversationId));
}
