/**
 * A tool the runtime runs itself (Bash, Read, …), as Letta Code 0.32.18 runs
 * one (recorded: test/fixtures/real-peer/unkind/bash-snapshots.json): the
 * model's proposal and approval step like any tool call, executing status,
 * `client_tool_start`, the output streamed as growing `tool_return_message`
 * snapshots of one result (id `synthetic-tool-return-stream-<tool_call_id>`,
 * status `success`), `client_tool_end`, then the final `tool_return_message`
 * with its own id, and the next model step.
 */
import type { ProposedToolKind } from "./scripted-auto-approval.js";
import { lifecycleDelta, toolReturnDelta } from "./scripted-frames.js";
import { plainFailure } from "./scripted-tool-result.js";
import type { ScriptedToolResult } from "./scripted-runtime-types.js";
import type { TurnHost } from "./scripted-turn-host.js";
import { INTERRUPTED_BY_USER, type Decision, type Proposal } from "./scripted-turn-start.js";

/**
 * What running a runtime tool uses of its turn (`ScriptedTurnSession` has it). Named here, not
 * imported from scripted-turn.ts, which imports this file: no import cycle, not even of types.
 */
export interface RuntimeToolTurn {
  readonly host: TurnHost;
  readonly signal: AbortSignal;
  propose(specs: Decision["spec"][], kind: ProposedToolKind): Promise<Proposal | undefined>;
  emitDelta(delta: Record<string, unknown>): void;
  ensureStep(): void;
}

export interface RuntimeToolOptions {
  /** `error` for a failing tool. Default `success`. */
  status?: "success" | "error" | undefined;
  /**
   * Stream the output before the final result, one snapshot per line so far (the whole text up
   * to that line), like Bash. Default `true`; `false` for a tool that prints nothing while it runs.
   */
  stream?: boolean | undefined;
  /** The model's tool-call id. Default: a fresh `call-<uuid>`. */
  toolCallId?: string | undefined;
}

/** The growing snapshots of `output`: its first line, its first two lines, … (no trailing newline). */
export function outputSnapshots(output: string): string[] {
  const lines = output.replace(/\n$/, "").split("\n");
  if (lines.length === 1 && lines[0] === "") return [];
  return lines.map((_line, index) => lines.slice(0, index + 1).join("\n"));
}

export async function runRuntimeTool(
  turn: RuntimeToolTurn,
  spec: Decision["spec"],
  output: string,
  options: RuntimeToolOptions,
): Promise<ScriptedToolResult> {
  const proposal = await turn.propose([spec], "runtime");
  if (!proposal) return plainFailure(INTERRUPTED_BY_USER);
  const [decision] = proposal.decisions;
  const { runId } = proposal;
  const host = turn.host;
  let result: ScriptedToolResult;
  if (!decision!.approved) {
    result = plainFailure(decision!.denial ?? "Denied");
  } else if (turn.signal.aborted) {
    result = plainFailure(INTERRUPTED_BY_USER);
  } else {
    const { toolCallId, name, input } = decision!.spec;
    host.setLoop("EXECUTING_CLIENT_SIDE_TOOL", [runId], [toolCallId]);
    host.emitDeviceStatus();
    turn.emitDelta(
      lifecycleDelta(
        "client_tool_start",
        runId,
        { tool_call_id: toolCallId, tool_name: name, tool_args: JSON.stringify(input) },
        decision!.messageId,
      ),
    );
    for (const snapshot of options.stream === false ? [] : outputSnapshots(output)) {
      turn.emitDelta(snapshotDelta(runId, toolCallId, snapshot, new Date(host.now()).toISOString()));
      await host.flush();
    }
    const isError = options.status === "error";
    result = { content: [{ type: "text", text: output }], isError, toolReturn: output };
  }
  const status = result.isError ? "error" : "success";
  turn.emitDelta(lifecycleDelta("client_tool_end", runId, { tool_call_id: spec.toolCallId, status }, decision!.messageId));
  turn.emitDelta(toolReturnDelta(runId, spec.toolCallId, status, result.toolReturn));
  // The result goes straight back to the model: the next step starts now.
  if (!turn.signal.aborted) turn.ensureStep();
  await host.flush();
  return result;
}

/** One streamed snapshot of a running tool's output. */
function snapshotDelta(runId: string, toolCallId: string, text: string, date: string): Record<string, unknown> {
  return {
    type: "message",
    message_type: "tool_return_message",
    id: `synthetic-tool-return-stream-${toolCallId}`,
    date,
    run_id: runId,
    status: "success",
    tool_call_id: toolCallId,
    tool_return: text,
    tool_returns: [{ tool_call_id: toolCallId, status: "success", tool_return: text, stdout: text.split("\n") }],
  };
}
