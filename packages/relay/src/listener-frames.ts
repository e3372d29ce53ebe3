/**
 * Where a frame from the listener goes (docs/relay.md "Routing rules"): a tool call to its owner
 * (tool-call-router.ts), a response to the session whose request it answers, a runtime's frame
 * to the sessions bound to that runtime, and a frame with neither to every session of the
 * environment.
 */
import type { RelayEmit } from "./relay-events.js";
import type { RelayFrame } from "./relay-frame.js";
import type { ResolvedRelayOptions } from "./relay-options.js";
import { channelForType, isResponseType, type Channel } from "./relay-routing.js";
import type { RequestOwners } from "./request-owners.js";
import type { SdkCommands } from "./sdk-commands.js";
import type { SdkSession } from "./sdk-session.js";
import type { ToolCallRouter } from "./tool-call-router.js";

export interface ListenerFramesContext {
  connectionId: string;
  options: ResolvedRelayOptions;
  emit: RelayEmit;
  router: ToolCallRouter;
  requests: RequestOwners;
  commands: SdkCommands;
  /** The environment's current sessions. */
  sessions(): Iterable<SdkSession>;
}

/** Routes one listener frame; `socketChannel` is the listener socket's (undefined for a single socket). */
export function routeListenerFrame(context: ListenerFramesContext, frame: RelayFrame, socketChannel: Channel | undefined): void {
  const channel = socketChannel ?? channelForType(frame.type);
  const { connectionId, emit, options } = context;
  if (frame.type === "external_tool_call_request" && frame.requestId) {
    const outcome = context.router.request(frame);
    emit("tool-call-requested", { connectionId, requestId: frame.requestId, delivered: outcome === "delivered" });
    return;
  }
  if (isResponseType(frame.type)) {
    const pending = frame.requestId === undefined ? undefined : context.requests.take(frame.requestId);
    if (!pending || pending.session.isClosed) {
      options.logger.debug("relay: response for no waiting SDK session dropped", { connectionId, type: frame.type });
      return;
    }
    if (frame.type === "runtime_start_response" && pending.type === "runtime_start") context.commands.startAnswered(pending, frame);
    pending.session.deliver(channel, frame);
    return;
  }
  let delivered = 0;
  for (const session of [...context.sessions()]) {
    if (frame.runtimeKey !== undefined && session.runtimeKey !== frame.runtimeKey) continue;
    session.deliver(channel, frame);
    delivered++;
  }
  if (delivered === 0) options.logger.debug("relay: listener frame has no SDK session of its runtime", { connectionId, type: frame.type });
}
