/**
 * Which runtime this session answers for — the one fact every frame handler
 * asks about. The runtime replays other people's approvals to every new
 * connection, and a relay may route another session's call here: a session
 * answers only for its own agent and conversation. Before `runtime_start`
 * answers, "own" is the runtime being started when the caller named it.
 */
import type { InboundRuntimeScope, RuntimeScope } from "../wire/index.js";
import { scopeOf } from "./runtime-scope-of.js";

/** `mine`: answer it; `foreign`: leave it alone; `unscoped`: no scope anywhere (answer with an error). */
export type ScopeVerdict = { kind: "mine"; scope: RuntimeScope } | { kind: "foreign"; scope: RuntimeScope } | { kind: "unscoped" };

const UNSCOPED: ScopeVerdict = Object.freeze({ kind: "unscoped" });

export class OwnRuntime {
  #scope: RuntimeScope | undefined;
  #expected: RuntimeScope | undefined;
  #mine: (ScopeVerdict & { kind: "mine" }) | undefined;

  /** `expected`: the runtime the caller named (agent id and conversation id), if it named one. */
  constructor(expected: RuntimeScope | undefined) {
    this.#expected = expected;
  }

  /** The session's runtime, once `runtime_start` answered. */
  get scope(): RuntimeScope | undefined {
    return this.#scope;
  }

  set scope(scope: RuntimeScope | undefined) {
    this.#scope = scope;
  }

  /** Whose is a frame with this scope? A frame without one belongs to this session's connection. */
  classify(inbound: InboundRuntimeScope | undefined): ScopeVerdict {
    const mine = this.#scope ?? this.#expected;
    if (mine === undefined) return inbound === undefined ? UNSCOPED : { kind: "foreign", scope: scopeOf(inbound)! };
    // One verdict object per scope, not per frame (every tool call asks).
    if (this.#mine?.scope !== mine) this.#mine = { kind: "mine", scope: mine };
    if (inbound === undefined || ((inbound.agent_id ?? "") === mine.agent_id && inbound.conversation_id === mine.conversation_id))
      return this.#mine;
    return { kind: "foreign", scope: scopeOf(inbound)! };
  }
}
