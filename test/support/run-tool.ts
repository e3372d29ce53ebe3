/**
 * Run one tool call the way the call table does — preflight, the tool's own
 * input validation, then the callback — without a session: for tests of tools.
 */
import type { CallOutcome } from "../../src/calls/index.js";
import { executeTool, preflightToolCall, type ToolCallContext, type ToolRegistry } from "../../src/tools/index.js";

export interface RunToolOptions {
  signal?: AbortSignal;
  maxInputBytes?: number;
  maxResultChars?: number;
  context?: Partial<ToolCallContext>;
}

export async function runTool(
  registry: ToolRegistry,
  toolName: string,
  input: unknown,
  options: RunToolOptions = {},
): Promise<CallOutcome> {
  const tool = registry.get(toolName);
  const inputBytes = Buffer.byteLength(JSON.stringify(input) ?? "");
  const refused = preflightToolCall(tool, { toolName, inputBytes, toolNames: () => registry.names() }, options.maxInputBytes ?? 1_048_576);
  if (refused !== undefined || tool === undefined) return refused!;
  const checked = await tool.validateInput(input);
  if (!checked.ok) return { kind: "invalid-input", issues: checked.issues };
  const context: ToolCallContext = {
    signal: options.signal ?? new AbortController().signal,
    toolCallId: "call-1",
    agentId: "agent-1",
    conversationId: "conv-1",
    progress: () => undefined,
    ...options.context,
  };
  return new Promise((resolve) => executeTool(tool, checked.value, context, options.maxResultChars ?? 32_000, resolve));
}
