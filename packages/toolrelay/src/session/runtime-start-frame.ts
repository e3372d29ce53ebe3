import { nextRequestId } from "../internal/request-id.js";
import type { ExternalToolsGroup, RuntimeScope, RuntimeStartFrame } from "../wire/index.js";
import type { AgentOptions, PermissionMode } from "./session-options.js";

export interface RuntimeStartInput {
  /** Known runtime (after the first start, and on every re-registration). */
  runtime: RuntimeScope | undefined;
  agent: AgentOptions;
  conversation: string;
  tools: ExternalToolsGroup[];
  mode: PermissionMode | undefined;
  cwd: string | undefined;
  clientInfo: { name: string; title?: string | undefined; version?: string | undefined };
}

/**
 * The `runtime_start` frame. It always carries the FULL tool set: the runtime
 * replaces a connection's tools for the runtime with exactly what it gets, and
 * an omitted list would unregister them.
 */
export function buildRuntimeStartFrame(input: RuntimeStartInput): RuntimeStartFrame {
  const frame: Record<string, unknown> = {
    type: "runtime_start",
    request_id: nextRequestId("runtime-start"),
  };
  if (input.runtime) {
    frame.agent_id = input.runtime.agent_id;
    frame.conversation_id = input.runtime.conversation_id;
  } else {
    if ("id" in input.agent) frame.agent_id = input.agent.id;
    else frame.create_agent = { body: { ...input.agent.create } };
    if (input.conversation === "new") frame.create_conversation = {};
    else frame.conversation_id = input.conversation;
  }
  if (input.mode !== undefined) frame.mode = input.mode;
  if (input.cwd !== undefined) frame.cwd = input.cwd;
  frame.client_info = input.clientInfo;
  frame.external_tools = input.tools;
  return frame as unknown as RuntimeStartFrame;
}
