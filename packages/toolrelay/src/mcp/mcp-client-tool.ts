/**
 * One MCP tool as a toolrelay client tool, made with `defineTool`:
 *
 * - name: `prefix` + the MCP name, with characters the runtime does not
 *   accept (anything but letters, digits, `_`, `-`) replaced by `_`;
 * - description: the server's, verbatim (its `title`, or a line naming the
 *   server, when it gives none: the runtime needs one);
 * - input schema: the server's `inputSchema`, verbatim (without `$schema`),
 *   advertised with `validate: false`: the server validates its own
 *   arguments, as MCP requires, and its refusal reaches the model as the
 *   tool's error;
 * - annotations: MCP's, kept (`title` from the tool's `title` when the
 *   annotations have none; `destructiveHint` is dropped when `readOnlyHint`
 *   is true, where MCP says it means nothing);
 * - timeout: the connection's `callTimeoutMs`;
 * - needsApproval: what the connection's `approval` policy says for the tool as listed.
 *
 * A name (after the prefix) that is one of the runtime's own tools (`Read`,
 * `Bash`, ...) is refused: the server's names are not the app's choice, and
 * such a tool would replace the runtime's without anyone having asked for it.
 * The app gives the server a `prefix` (or leaves the tool out with `filter`).
 */
import { isToolrelayError, ToolrelayError } from "../errors.js";
import {
  defineTool,
  TOOL_NAME_PATTERN,
  type ClientTool,
  type JsonSchemaObject,
  type ToolAnnotations,
  type ToolResult,
} from "../tools/index.js";
import type { McpToolInfo } from "./mcp-tools-options.js";

export interface McpClientToolOptions {
  prefix: string;
  /** `MCP server "<name>"`, for messages. */
  server: string;
  timeoutMs: number;
  /** The `approval` policy: whether the tool's calls must be approved first. Default: none must. */
  needsApproval?: ((tool: McpToolInfo) => boolean) | undefined;
  /** Calls the tool by its MCP name. */
  call(mcpName: string, input: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult>;
}

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

/**
 * Throws `INVALID_TOOL_DEFINITION` naming the server and the tool when the tool cannot be offered;
 * for the name of one of the runtime's own tools its `cause` is the `RESERVED_TOOL_NAME` error
 * (see {@link isReservedNameRefusal}) and the message names `prefix`.
 */
export function mcpClientTool(tool: McpToolInfo, options: McpClientToolOptions): ClientTool {
  const name = modelToolName(options.prefix, tool.name);
  if (!TOOL_NAME_PATTERN.test(name)) {
    throw new ToolrelayError(
      "INVALID_TOOL_DEFINITION",
      `${options.server} offers the tool ${JSON.stringify(tool.name)}, whose name ${JSON.stringify(name)} is longer than the runtime's 64 characters: ` +
        "use a shorter prefix, or leave the tool out with filter",
    );
  }
  const description = nonEmpty(tool.description) ?? nonEmpty(tool.title) ?? `The ${tool.name} tool of ${options.server}.`;
  const needsApproval = approvalOf(tool, options);
  try {
    return defineTool({
      name,
      description,
      inputSchema: tool.inputSchema as JsonSchemaObject,
      validate: false,
      annotations: annotationsOf(tool),
      timeoutMs: options.timeoutMs,
      needsApproval,
      execute: (input, { signal }) => options.call(tool.name, input, signal),
    });
  } catch (error) {
    if (isToolrelayError(error, "RESERVED_TOOL_NAME")) {
      throw new ToolrelayError(
        "INVALID_TOOL_DEFINITION",
        `${options.server} offers the tool ${JSON.stringify(tool.name)}, whose name ${JSON.stringify(name)} is that of one of the runtime's own tools: ` +
          `offered as is, it would replace the runtime's ${JSON.stringify(name)} for the model. Give the server a prefix ` +
          `(prefix: "fs_" offers it as ${JSON.stringify(`fs_${name}`)}), or leave it out with filter`,
        { cause: error, details: { tool: tool.name, name } },
      );
    }
    throw new ToolrelayError(
      "INVALID_TOOL_DEFINITION",
      `${options.server} offers the tool ${JSON.stringify(tool.name)}, which cannot be a client tool: ${
        error instanceof Error ? error.message : String(error)
      } (leave it out with filter)`,
      { cause: error },
    );
  }
}

/** The `approval` policy's answer for `tool`; a policy that throws or answers no boolean is the app's bug, named. */
function approvalOf(tool: McpToolInfo, options: McpClientToolOptions): boolean {
  if (options.needsApproval === undefined) return false;
  let answer: unknown;
  try {
    answer = options.needsApproval(tool);
  } catch (error) {
    throw new ToolrelayError(
      "INVALID_TOOL_DEFINITION",
      `${options.server} offers the tool ${JSON.stringify(tool.name)}: the approval policy threw: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  if (typeof answer !== "boolean") {
    throw new ToolrelayError(
      "INVALID_TOOL_DEFINITION",
      `${options.server} offers the tool ${JSON.stringify(tool.name)}: the approval policy must return true or false, got ${
        answer === null ? "null" : typeof answer
      }`,
    );
  }
  return answer;
}

/** `true` for {@link mcpClientTool}'s refusal of a tool named like one of the runtime's own tools. */
export function isReservedNameRefusal(error: unknown): error is ToolrelayError {
  return isToolrelayError(error, "INVALID_TOOL_DEFINITION") && isToolrelayError(error.cause, "RESERVED_TOOL_NAME");
}

/** `prefix` + `mcpName`, every character the runtime refuses replaced by `_`. */
export function modelToolName(prefix: string, mcpName: string): string {
  return `${prefix}${mcpName.replace(/[^a-zA-Z0-9_-]/g, "_")}`;
}

function annotationsOf(tool: McpToolInfo): ToolAnnotations {
  const given = typeof tool.annotations === "object" && tool.annotations !== null ? tool.annotations : {};
  const annotations: ToolAnnotations = {};
  const title = nonEmpty(given.title) ?? nonEmpty(tool.title);
  if (title !== undefined) annotations.title = title;
  for (const hint of HINTS) {
    const value = given[hint];
    if (typeof value === "boolean") annotations[hint] = value;
  }
  if (annotations.readOnlyHint === true) delete annotations.destructiveHint;
  return annotations;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}
