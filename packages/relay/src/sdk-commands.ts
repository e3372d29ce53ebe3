/**
 * What the relay does with one frame from an SDK session (docs/relay.md "Routing rules"): pings
 * are answered and acks consumed here; a tool answer passes only from the call's owner; every
 * other command passes to the listener only if it names no runtime or the session's own, and
 * only with a `request_id` no other session is waiting on. A `runtime_start` is also how a
 * session whose URL lacked the runtime gets bound to one: at once when it names agent and
 * conversation, else when the listener's successful response names the runtime it created.
 */
import type { WebSocket } from "ws";
import type { ListenerConnection } from "./listener-connection.js";
import type { RelayEmit } from "./relay-events.js";
import type { RelayFrame } from "./relay-frame.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import { refusalResponse, type RefusalKind } from "./relay-refusal.js";
import { PONG_FRAME, startRegistersTools, toolsUpdateRuntimes, type Channel } from "./relay-routing.js";
import type { PendingRequest, RequestOwners } from "./request-owners.js";
import { admitsRuntime, bindRuntime, refuseStart } from "./runtime-binding.js";
import type { SdkSession } from "./sdk-session.js";
import type { ToolCallRouter } from "./tool-call-router.js";

export interface SdkCommandsContext {
  connectionId: string;
  options: ResolvedRelayOptions;
  listener: ListenerConnection;
  router: ToolCallRouter;
  requests: RequestOwners;
  emit: RelayEmit;
  /** A tool answer went (or was queued) to the listener: kept to be written again on its next connect. */
  answered(requestId: string, runtimeKey: string, answer: RelayFrame, delivery: "sent" | "queued"): void;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

export class SdkCommands {
  #context: SdkCommandsContext;

  constructor(context: SdkCommandsContext) {
    this.#context = context;
  }

  /** One frame from `session`'s socket for `channel`, in arrival order. */
  handle(session: SdkSession, channel: Channel, socket: WebSocket, frame: RelayFrame | undefined): void {
    const { connectionId, options } = this.#context;
    if (session.isClosed) return;
    if (!frame) {
      options.logger.debug("relay: unreadable SDK frame dropped", { connectionId, session: session.id });
      return;
    }
    if (frame.type === "ping") {
      this.#answerPing(session, socket);
      return;
    }
    if (frame.type === "ack") {
      const seq = frame.field("seq");
      if (typeof seq === "number") session.acknowledge(channel, seq);
      return;
    }
    if (channel === "stream") {
      options.logger.debug("relay: command on an SDK stream socket dropped", { connectionId, type: frame.type });
      return;
    }
    if (frame.type === "external_tool_call_response") {
      this.#answerToolCall(session, frame);
      return;
    }
    if (frame.type === "runtime_start") {
      this.#runtimeStart(session, frame);
      return;
    }
    if (frame.type === "runtime_external_tools_update") {
      this.#toolsUpdate(session, frame);
      return;
    }
    if (frame.runtimeKey !== undefined && !admitsRuntime(session.binding, frame.runtimeKey)) {
      this.#refuse(session, frame, "foreign-runtime", `relay: ${frame.type} names a runtime this session is not bound to`);
      return;
    }
    this.#forward(session, frame, { session, type: frame.type, registersTools: false, registersOnAnswer: false });
  }

  /**
   * The listener answered a `runtime_start` that created its agent or conversation: a successful
   * answer binds the session to the runtime it names, and makes it the runtime's tool registrant
   * (or clears the registrant when the start carried no tools).
   */
  startAnswered(pending: PendingRequest, frame: RelayFrame): void {
    const { session } = pending;
    if (!pending.registersOnAnswer) return;
    const runtime = frame.field("runtime") as { agent_id?: unknown; conversation_id?: unknown } | null | undefined;
    const agentId = nonEmptyString(runtime?.agent_id);
    const conversationId = nonEmptyString(runtime?.conversation_id);
    if (frame.field("success") !== true || !agentId || !conversationId) return;
    const binding = bindRuntime(session.binding, agentId, conversationId);
    if (binding?.state !== "bound") {
      this.#context.options.logger.warn("relay: runtime_start_response names another runtime than the session is bound to; not bound", {
        connectionId: this.#context.connectionId,
        session: session.id,
      });
      return;
    }
    const newlyBound = session.runtimeKey === undefined;
    session.binding = binding;
    if (pending.registersTools) this.#context.router.registered(session, binding.runtimeKey);
    else this.#context.router.cleared(binding.runtimeKey);
    if (newlyBound) this.#context.router.sessionBound();
  }

  /** The relay answers an SDK socket's JSON ping here, and only here. */
  #answerPing(session: SdkSession, socket: WebSocket): void {
    if (this.#context.options.respondToJsonPings) session.sendUnsequenced(socket, PONG_FRAME);
  }

  #answerToolCall(session: SdkSession, frame: RelayFrame): void {
    const { connectionId, router, listener, emit, options } = this.#context;
    const outcome = router.answer(session, frame.requestId);
    if ("refused" in outcome) {
      if (outcome.refused === "unknown") {
        options.logger.debug("relay: answer for an unknown tool call dropped", { connectionId, requestId: frame.requestId });
        return;
      }
      this.#refuse(session, frame, "not-call-owner", "relay: this session does not own the tool call it answered");
      return;
    }
    const delivery = listener.sendCommand(frame, { always: true }) === "sent" ? "sent" : "queued";
    this.#context.answered(outcome.call.requestId, outcome.call.runtimeKey, frame, delivery);
    emit("tool-call-answered", { connectionId, requestId: outcome.call.requestId, delivery });
  }

  #runtimeStart(session: SdkSession, frame: RelayFrame): void {
    const agentId = nonEmptyString(frame.field("agent_id"));
    const conversationId = nonEmptyString(frame.field("conversation_id"));
    const refused = refuseStart(session.binding, agentId, conversationId);
    if (refused) {
      this.#refuse(session, frame, "foreign-runtime", `relay: ${refused}`);
      return;
    }
    const registersTools = startRegistersTools(frame);
    const namesRuntime = agentId !== undefined && conversationId !== undefined;
    if (!this.#forward(session, frame, { session, type: frame.type, registersTools, registersOnAnswer: !namesRuntime })) return;
    if (!namesRuntime) return;
    // The start names its runtime: the session is bound now (as if its URL had named it), and
    // the listener will hold this start's tools for the runtime (it handles commands in order).
    const newlyBound = session.runtimeKey === undefined;
    session.binding = bindRuntime(session.binding, agentId, conversationId) ?? session.binding;
    const runtimeKey = session.runtimeKey!;
    if (registersTools) this.#context.router.registered(session, runtimeKey);
    else this.#context.router.cleared(runtimeKey);
    if (newlyBound) this.#context.router.sessionBound();
  }

  #toolsUpdate(session: SdkSession, frame: RelayFrame): void {
    const runtimes = toolsUpdateRuntimes(frame) ?? [];
    if (runtimes.some(({ runtimeKey }) => !admitsRuntime(session.binding, runtimeKey))) {
      this.#refuse(session, frame, "foreign-runtime", "relay: runtime_external_tools_update names a runtime this session is not bound to");
      return;
    }
    if (!this.#forward(session, frame, { session, type: frame.type, registersTools: false, registersOnAnswer: false })) return;
    for (const { runtimeKey, registers } of runtimes) {
      if (registers) this.#context.router.registered(session, runtimeKey);
      else this.#context.router.cleared(runtimeKey);
    }
  }

  /** Passes a command to the listener (remembering who asked); false when it was refused instead. */
  #forward(session: SdkSession, frame: RelayFrame, pending: PendingRequest): boolean {
    if (frame.requestId !== undefined && !this.#context.requests.claim(frame.requestId, pending)) {
      this.#refuse(session, frame, "request-id-in-use", "relay: another session is waiting for an answer with this request_id");
      return false;
    }
    if (this.#context.listener.sendCommand(frame) === "refused") {
      if (frame.requestId !== undefined) this.#context.requests.take(frame.requestId);
      this.#refuse(session, frame, "queue-full", "relay: the listener is reconnecting and the environment's command queue is full");
      return false;
    }
    return true;
  }

  #refuse(session: SdkSession, frame: RelayFrame, kind: RefusalKind, reason: string): void {
    const { connectionId, options, emit } = this.#context;
    options.logger.info("relay: SDK command refused", { connectionId, session: session.id, type: frame.type, kind });
    const response = refusalResponse(frame, reason);
    if (response) session.deliver("control", response);
    emit("refused", { kind, tenant: session.principal.tenant.name, connectionId, reason });
  }
}
