/**
 * The client tools of one session, by name. Immutable: to change the tool set,
 * build a new registry and register it again (the runtime replaces a
 * connection's tool set as a whole, docs/protocol.md#tool-registration).
 */
import { ToolrelayError } from "../errors.js";
import { RUNTIME_MIN_TOOL_TIMEOUT_MS } from "../internal/runtime-limits.js";
import type { ExternalToolDefinition, ExternalToolsGroup } from "../wire/index.js";
import { isClientTool, MAX_TOOL_TIMEOUT_MS, type ClientTool } from "./define-tool.js";

/** Smallest `timeout_ms` the runtime accepts in a tool definition (newer runtimes validate 1,000–300,000). */
export const MIN_ADVERTISED_TIMEOUT_MS = RUNTIME_MIN_TOOL_TIMEOUT_MS;

/**
 * What the call path needs from a tool set: one lookup by name, and the names
 * for an "unknown tool" answer. A `ToolRegistry` is one; so is the session's
 * view of its current registry (which changes when an MCP server's tools do).
 */
export interface ToolLookup {
  get(name: string): ClientTool | undefined;
  names(): string[];
}

export class ToolRegistry implements ToolLookup {
  readonly #tools = new Map<string, ClientTool>();

  /**
   * @param tools - tools made with `defineTool`, in the order they are
   *   advertised. Default `[]`. Throws `ToolrelayError("DUPLICATE_TOOL_NAME")`
   *   when two share a name, and `ToolrelayError("INVALID_TOOL_DEFINITION")`
   *   for an item that `defineTool` did not make.
   */
  constructor(tools: Iterable<ClientTool> = []) {
    if (tools === null || typeof (tools as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== "function") {
      throw new ToolrelayError("INVALID_OPTIONS", "tools must be an array of tools made with defineTool()");
    }
    const positions = new Map<string, number>();
    let index = 0;
    for (const tool of tools) {
      if (!isClientTool(tool)) {
        throw new ToolrelayError("INVALID_TOOL_DEFINITION", `tools[${index}] was not made with defineTool()`);
      }
      const earlier = positions.get(tool.name);
      if (earlier !== undefined) {
        throw new ToolrelayError(
          "DUPLICATE_TOOL_NAME",
          `two tools are named "${tool.name}" (tools[${earlier}] and tools[${index}]); tool names must be unique in a session`,
          { details: { name: tool.name } },
        );
      }
      positions.set(tool.name, index);
      this.#tools.set(tool.name, tool);
      index++;
    }
  }

  /** How many tools are registered. */
  get size(): number {
    return this.#tools.size;
  }

  /** The tool with this exact name, or `undefined`. */
  get(name: string): ClientTool | undefined {
    return this.#tools.get(name);
  }

  /** Every tool name, in registration order. */
  names(): string[] {
    return [...this.#tools.keys()];
  }

  /** Every tool, in registration order. */
  tools(): ClientTool[] {
    return [...this.#tools.values()];
  }

  /**
   * The tools as the runtime registers them: one unscoped group holding every
   * tool (`{ name, label?, description, parameters, timeout_ms }`), or `[]`
   * when there are none (which removes this connection's tools from the
   * runtime). `label` is `annotations.title`. `timeout_ms` is the tool's own
   * `timeoutMs`, or `defaultTimeoutMs` (the session's `toolTimeoutMs`) when it
   * has none, clamped to the 1,000–300,000 ms newer runtimes accept (0.32.18
   * ignores the field; a newer runtime stops waiting at that deadline instead
   * of its fixed 300 s).
   */
  toWireGroups(defaultTimeoutMs: number): ExternalToolsGroup[] {
    if (this.#tools.size === 0) return [];
    const definitions = [...this.#tools.values()].map((tool): ExternalToolDefinition => {
      const title = tool.annotations.title;
      const label = title === undefined ? {} : { label: title };
      const timeoutMs = advertisedTimeoutMs(tool.timeoutMs ?? defaultTimeoutMs);
      return { name: tool.name, ...label, description: tool.description, parameters: tool.jsonSchema, timeout_ms: timeoutMs };
    });
    return [{ tools: definitions }];
  }
}

/** `timeoutMs` as the runtime accepts it: an integer in 1,000–300,000 ms. */
export function advertisedTimeoutMs(timeoutMs: number): number {
  const whole = Number.isFinite(timeoutMs) ? Math.ceil(timeoutMs) : MAX_TOOL_TIMEOUT_MS;
  return Math.min(MAX_TOOL_TIMEOUT_MS, Math.max(MIN_ADVERTISED_TIMEOUT_MS, whole));
}
