import type { InboundRuntimeScope, RuntimeScope } from "../wire/index.js";

/**
 * The runtime scope of an inbound frame as the session uses it. The runtime
 * may send `agent_id: null` for a conversation-only runtime; that becomes "".
 */
export function scopeOf(inbound: InboundRuntimeScope | undefined): RuntimeScope | undefined {
  if (inbound === undefined) return undefined;
  return { agent_id: inbound.agent_id ?? "", conversation_id: inbound.conversation_id };
}

/** Whether an inbound scope names `scope`'s agent and conversation (as `scopeOf` reads it, without the copy). */
export function isScope(inbound: InboundRuntimeScope, scope: RuntimeScope): boolean {
  return (inbound.agent_id ?? "") === scope.agent_id && inbound.conversation_id === scope.conversation_id;
}
