import type { InboundRuntimeScope, RuntimeScope } from "../wire/index.js";

/**
 * The runtime scope of an inbound frame as the session uses it. The runtime
 * may send `agent_id: null` for a conversation-only runtime; that becomes "".
 */
export function scopeOf(inbound: InboundRuntimeScope | undefined): RuntimeScope | undefined {
  if (inbound === undefined) return undefined;
  return { agent_id: inbound.agent_id ?? "", conversation_id: inbound.conversation_id };
}

/** Whether two scopes name the same agent and conversation. */
export function sameScope(left: RuntimeScope, right: RuntimeScope): boolean {
  return left.agent_id === right.agent_id && left.conversation_id === right.conversation_id;
}
