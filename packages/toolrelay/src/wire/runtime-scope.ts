/**
 * The runtime scope: which agent and conversation a frame is about.
 * Outbound (what we send) it is strict: two non-empty strings, as the runtime
 * requires (`protocol-validation.ts`, `external-tool-protocol.ts`). Inbound it
 * is lenient: the runtime may send `agent_id: null` (a conversation-only
 * runtime) and Cloud adds `acting_user_id`.
 */
import { z } from "zod/v4";

/** A scope we send: `{ agent_id, conversation_id }`, both non-empty strings. */
export const runtimeScopeSchema = z.strictObject({
  agent_id: z.string().min(1),
  /** May be `"default"`, the agent's default conversation. */
  conversation_id: z.string().min(1),
});
export type RuntimeScope = z.infer<typeof runtimeScopeSchema>;

/** A scope the runtime sends: `agent_id` may be `null`; other fields are kept. */
export const inboundRuntimeScopeSchema = z.looseObject({
  agent_id: z.string().nullable(),
  conversation_id: z.string(),
  acting_user_id: z.string().optional(),
});
export type InboundRuntimeScope = z.infer<typeof inboundRuntimeScopeSchema>;

/** The runtime's own key for a scope (`agent_id:conversation_id`), used to find duplicates. */
export function runtimeScopeKey(scope: { agent_id: string | null; conversation_id: string }): string {
  return `${scope.agent_id ?? ""}:${scope.conversation_id}`;
}
