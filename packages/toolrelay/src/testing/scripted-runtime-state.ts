/**
 * The scripted runtime's bookkeeping, keyed like the real runtime (docs/protocol.md#subscriptions,
 * docs/protocol.md#tool-registration): external tool registrations per (connection, runtime) with
 * replace semantics, subscriptions per connection, and the agents and
 * conversations it created.
 */
import type { ScriptedRegistration, ScriptedRuntimeScope, ScriptedVisibleTool } from "./scripted-runtime-types.js";

/** `agent:conversation` — the external-tools runtime key of the real runtime. */
export function runtimeKey(scope: ScriptedRuntimeScope): string {
  return `${scope.agent_id}:${scope.conversation_id}`;
}

interface StoredRegistration extends ScriptedRegistration {
  /** Registration order; on a name collision the later registration wins. */
  sequence: number;
}

/** What a turn needs to compute its visible tools. */
export interface ToolVisibilityQuery {
  runtime: ScriptedRuntimeScope;
  /** The connection the turn's input came from. */
  originConnectionId: string;
  /** `payload.external_tool_scope_ids`. */
  scopeIds?: readonly string[] | undefined;
  /** `payload.client_tool_allowlist` (undefined = no filter). */
  allowlist?: readonly string[] | undefined;
}

export class ScriptedRuntimeState {
  /** `JSON.stringify([connectionId, runtimeKey])` → that connection's tools for that runtime. */
  readonly #registrations = new Map<string, StoredRegistration[]>();
  readonly #subscriptions = new Map<string, Map<string, ScriptedRuntimeScope>>();
  readonly #conversationAgents = new Map<string, string>();
  readonly #agentNames = new Map<string, string>();
  #sequence = 0;

  /** Replace `connectionId`'s tools for `scope` with `groups` (`[]` removes them), like `runtime_start` / updates. */
  replaceTools(connectionId: string, scope: ScriptedRuntimeScope, groups: readonly unknown[]): void {
    const key = JSON.stringify([connectionId, runtimeKey(scope)]);
    const tools: StoredRegistration[] = [];
    for (const group of groups as Array<{ scope_id?: string | undefined; tools: Array<Record<string, unknown>> }>) {
      for (const tool of group.tools) {
        tools.push({
          name: tool.name as string,
          ...(tool.label !== undefined ? { label: tool.label as string } : {}),
          description: tool.description as string,
          parameters: tool.parameters as Record<string, unknown>,
          ...(group.scope_id !== undefined ? { scopeId: group.scope_id } : {}),
          connectionId,
          runtime: { agent_id: scope.agent_id, conversation_id: scope.conversation_id },
          sequence: ++this.#sequence,
        });
      }
    }
    if (tools.length > 0) this.#registrations.set(key, tools);
    else this.#registrations.delete(key);
  }

  /** Every registration, in registration order. */
  allRegistrations(): ScriptedRegistration[] {
    return [...this.#registrations.values()]
      .flat()
      .sort((left, right) => left.sequence - right.sequence)
      .map(({ sequence: _sequence, ...registration }) => registration);
  }

  /**
   * The tools a turn sees (docs/protocol.md#tool-registration): same runtime; unscoped tools from any
   * connection; scoped ones only from the turn's own connection and only when
   * the turn selected the scope; then the allowlist; the later registration
   * wins a name collision.
   */
  visibleTools(query: ToolVisibilityQuery): ScriptedVisibleTool[] {
    const wanted = runtimeKey(query.runtime);
    const byName = new Map<string, StoredRegistration>();
    const candidates = [...this.#registrations.values()]
      .flat()
      .filter((tool) => runtimeKey(tool.runtime) === wanted)
      .filter((tool) =>
        tool.scopeId === undefined ? true : tool.connectionId === query.originConnectionId && (query.scopeIds ?? []).includes(tool.scopeId),
      )
      .filter((tool) => query.allowlist === undefined || query.allowlist.includes(tool.name))
      .sort((left, right) => left.sequence - right.sequence);
    for (const tool of candidates) byName.set(tool.name, tool);
    return [...byName.values()].map(({ sequence: _sequence, runtime: _runtime, ...tool }) => tool);
  }

  /** Whether `tool` (as a turn saw it) is still registered by its connection. */
  isStillRegistered(tool: ScriptedVisibleTool, scope: ScriptedRuntimeScope): boolean {
    const tools = this.#registrations.get(JSON.stringify([tool.connectionId, runtimeKey(scope)])) ?? [];
    return tools.some((candidate) => candidate.name === tool.name && candidate.scopeId === tool.scopeId);
  }

  subscribe(connectionId: string, scope: ScriptedRuntimeScope): void {
    let scopes = this.#subscriptions.get(connectionId);
    if (!scopes) {
      scopes = new Map();
      this.#subscriptions.set(connectionId, scopes);
    }
    scopes.set(runtimeKey(scope), { agent_id: scope.agent_id, conversation_id: scope.conversation_id });
  }

  isSubscribed(connectionId: string, scope: ScriptedRuntimeScope): boolean {
    return this.#subscriptions.get(connectionId)?.has(runtimeKey(scope)) === true;
  }

  /** Connections subscribed to `scope`, in subscription order. */
  subscribers(scope: ScriptedRuntimeScope): string[] {
    const key = runtimeKey(scope);
    return [...this.#subscriptions].filter(([, scopes]) => scopes.has(key)).map(([connectionId]) => connectionId);
  }

  /** docs/protocol.md#disconnects, the last steps: drop every registration and subscription of a closed connection. */
  forgetConnection(connectionId: string): void {
    for (const [key, tools] of this.#registrations) {
      if (tools[0]?.connectionId === connectionId) this.#registrations.delete(key);
    }
    this.#subscriptions.delete(connectionId);
  }

  clear(): void {
    this.#registrations.clear();
    this.#subscriptions.clear();
  }

  rememberAgent(agentId: string, name: string): void {
    this.#agentNames.set(agentId, name);
  }

  agentName(agentId: string): string {
    return this.#agentNames.get(agentId) ?? agentId;
  }

  rememberConversation(conversationId: string, agentId: string): void {
    this.#conversationAgents.set(conversationId, agentId);
  }

  /** The agent a conversation created here belongs to (undefined for conversations it never saw). */
  conversationAgent(conversationId: string): string | undefined {
    return this.#conversationAgents.get(conversationId);
  }
}
