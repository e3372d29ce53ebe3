/**
 * Which runtime this session answers for — the one fact every frame handler
 * asks about. The runtime replays other people's approvals to every new
 * connection, and a relay may route another session's call here: a session
 * answers only for its own agent and conversation. Before `runtime_start`
 * answers, "own" is the runtime being started when the caller named it.
 */
import type { InboundRuntimeScope, RuntimeScope } from "../wire/index.js";
import { isScope, scopeOf } from "./runtime-scope-of.js";

/** `mine`: answer it; `foreign`: leave it alone; `unscoped`: no scope anywhere (answer with an error). */
export type ScopeVerdict = { kind: "mine"; scope: RuntimeScope } | { kind: "foreign"; scope: RuntimeScope } | { kind: "unscoped" };

type MineVerdict = ScopeVerdict & { kind: "mine" };

const UNSCOPED: ScopeVerdict = Object.freeze({ kind: "unscoped" });

export class OwnRuntime {
  #scope: RuntimeScope | undefined;
  #expected: RuntimeScope | undefined;
  /** The verdict for the session's runtime's frames, made when that runtime is known (not per frame). */
  #mine: MineVerdict | undefined;

  /** `expected`: the runtime the caller named (agent id and conversation id), if it named one. */
  constructor(expected: RuntimeScope | undefined) {
    this.#expected = expected;
    this.scope = undefined;
  }

  /** The session's runtime, once `runtime_start` answered. */
  get scope(): RuntimeScope | undefined {
    return this.#scope;
  }

  set scope(scope: RuntimeScope | undefined) {
    this.#scope = scope;
    const mine = scope ?? this.#expected;
    this.#mine = mine === undefined ? undefined : { kind: "mine", scope: mine };
  }

  /** Whose is a frame with this scope? A frame without one belongs to this session's connection. */
  classify(inbound: InboundRuntimeScope | undefined): ScopeVerdict {
    const mine = this.#mine;
    if (mine === undefined) return inbound === undefined ? UNSCOPED : { kind: "foreign", scope: scopeOf(inbound)! };
    return inbound === undefined || isScope(inbound, mine.scope) ? mine : { kind: "foreign", scope: scopeOf(inbound)! };
  }
}
