/**
 * Run one tool call the way the call table does — known tool and input size,
 * the tool's own input validation, then the callback — without a session: for
 * tests of tools (the table's own preflight is tested through the table).
 */
import type { CallOutcome } from "../../packages/toolrelay/src/calls/index.js";
import { executeTool, type ToolCallContext, type ToolRegistry } from "../../packages/toolrelay/src/tools/index.js";

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
  const limit = options.maxInputBytes ?? 1_048_576;
  if (tool === undefined) return { kind: "unknown-tool", toolName, available: registry.names() };
  if (inputBytes > limit) return { kind: "input-too-large", bytes: inputBytes, limit };
  const checked = await tool.validateInput(input);
  if (!checked.ok) return { kind: "invalid-input", issues: checked.issues };
  const context: ToolCallContext = {
    signal: options.signal ?? new AbortController().signal,
    toolCallId: "call-1",
    agentId: "agent-1",
    conversationId: "conv-1",
    idempotencyKey: "tr1_test",
    progress: () => undefined,
    ...options.context,
  };
  return new Promise((resolve) =>
    executeTool(tool, checked.value, context, options.maxResultChars ?? 32_000, (_token, outcome) => resolve(outcome), undefined),
  );
}
