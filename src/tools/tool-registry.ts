/**
 * The client tools of one session, by name. Immutable: to change the tool set,
 * build a new registry and register it again (the runtime replaces a
 * connection's tool set as a whole, PROTOCOL §6.1).
 */
import { ToolrelayError } from "../errors.js";
import type { ExternalToolDefinition, ExternalToolsGroup } from "../wire/index.js";
import { isClientTool, type ClientTool } from "./define-tool.js";

export class ToolRegistry {
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

  /**
   * The tools as the runtime registers them: one unscoped group holding every
   * tool (`{ name, description, parameters, label? }`), or `[]` when there are
   * none (which removes this connection's tools from the runtime).
   */
  toWireGroups(): ExternalToolsGroup[] {
    if (this.#tools.size === 0) return [];
    const definitions = [...this.#tools.values()].map((tool): ExternalToolDefinition => {
      const label = tool.label === undefined ? {} : { label: tool.label };
      return { name: tool.name, ...label, description: tool.description, parameters: tool.jsonSchema };
    });
    return [{ tools: definitions }];
  }
}
