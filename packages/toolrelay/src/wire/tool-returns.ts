/**
 * The tool results one `tool_return_message` delta carries. The real runtime sends two shapes
 * (docs/protocol.md#stream_delta):
 *
 * - **synthetic** (what the runtime builds itself: client tools, its own tools, the local
 *   backend): top-level `tool_call_id`, `status` and `tool_return`, and the same result again as
 *   the one entry of `tool_returns`;
 * - **backend-streamed** (a tool the Letta API ran server-side): Letta Code 0.32.18's
 *   `normalizeToolReturnWireMessage` strips the top-level `tool_call_id`, `status`,
 *   `tool_return`, `stdout` and `stderr` and keeps only `tool_returns: [{ tool_call_id, status,
 *   tool_return, stdout?, stderr? }, …]`, one entry per result.
 *
 * An entry without a string `tool_call_id` or with a `status` other than `success` / `error` is
 * skipped, as the runtime's own `extractCanonicalToolReturnsFromWire` skips it. A delta with no
 * usable result at all is refused by {@link checkToolReturns} (the frame is reported invalid).
 */
import type { z } from "zod/v4";

/** One result of a tool call, as a `tool_return_message` delta carries it. */
export interface ToolReturnEntry {
  toolCallId: string;
  status: "success" | "error";
  /** The text the runtime reports (a string; older shapes may carry content parts). */
  toolReturn: unknown;
}

/** The results of one delta, and how many `tool_returns` entries were skipped as unusable. */
export interface ToolReturns {
  entries: ToolReturnEntry[];
  skipped: number;
}

function isStatus(value: unknown): value is "success" | "error" {
  return value === "success" || value === "error";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The results of a `tool_return_message` delta, in order: every usable `tool_returns` entry, then
 * the top-level result when its `tool_call_id` is not already among them (in the synthetic shape
 * it always is, so each result comes once). Never throws.
 */
export function toolReturnsOf(delta: Readonly<Record<string, unknown>>): ToolReturns {
  const entries: ToolReturnEntry[] = [];
  let skipped = 0;
  const list = delta.tool_returns;
  if (Array.isArray(list)) {
    for (const item of list as unknown[]) {
      if (isRecord(item) && typeof item.tool_call_id === "string" && isStatus(item.status)) {
        entries.push({ toolCallId: item.tool_call_id, status: item.status, toolReturn: item.tool_return });
      } else {
        skipped++;
      }
    }
  }
  const { tool_call_id: toolCallId, status } = delta;
  if (typeof toolCallId === "string" && isStatus(status) && !entries.some((entry) => entry.toolCallId === toolCallId)) {
    entries.push({ toolCallId, status, toolReturn: delta.tool_return });
  }
  return { entries, skipped };
}

/**
 * The refinement of the `tool_return_message` schema: the delta must carry at least one usable
 * result (a top-level `tool_call_id` with a `status`, or a `tool_returns` entry with both).
 */
export function checkToolReturns(delta: Readonly<Record<string, unknown>>, context: z.core.$RefinementCtx): void {
  if (toolReturnsOf(delta).entries.length > 0) return;
  const hasList = Array.isArray(delta.tool_returns) && delta.tool_returns.length > 0;
  context.addIssue({
    code: "custom",
    path: hasList ? ["tool_returns"] : ["tool_call_id"],
    message: hasList
      ? 'no entry of tool_returns has a string "tool_call_id" and a "status" of "success" or "error"'
      : 'a tool_return_message needs "tool_call_id" and "status", or a non-empty "tool_returns"',
  });
}

/**
 * A tool return as text, by the runtime's rule (Letta Code `normalizeToolReturnValue`): a string
 * as it is; text parts joined with `"\n"`; one text part its text; nothing `""`; anything else as
 * JSON.
 */
export function toolReturnText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) {
    const texts = (value as unknown[]).flatMap((part) =>
      isRecord(part) && part.type === "text" && typeof part.text === "string" ? [part.text] : [],
    );
    if (texts.length > 0) return texts.join("\n");
  }
  if (isRecord(value) && value.type === "text" && typeof value.text === "string") return value.text;
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return String(value);
  }
}
