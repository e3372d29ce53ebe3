/**
 * A tool source: tools that live somewhere else (an MCP server) and come and
 * go with it. The session opens every source before it registers with the
 * runtime, re-registers its tool set whenever a source's tools change, and
 * closes the sources when it closes. `toolrelay/mcp`'s `mcpTools()` is one;
 * any object made with {@link defineToolSource} can be passed in
 * `createSession({ tools })` beside plain tools.
 */
import { ToolrelayError } from "../errors.js";
import type { ClientTool } from "./define-tool.js";

/** A description of where tools come from; opened once per session (two sessions → two connections). */
export interface ToolSource {
  /** Names the source in errors and events, e.g. `MCP server "filesystem"`. */
  readonly label: string;
  /**
   * Connect and list the tools. The session calls it before `runtime_start`
   * and fails to start (closing what it opened) when it rejects. `signal`
   * fires when the session gives up starting.
   */
  open(options: { signal: AbortSignal }): Promise<OpenToolSource>;
}

/** A connected source. */
export interface OpenToolSource {
  /** The source's current tools (made with `defineTool`). */
  readonly tools: readonly ClientTool[];
  /** Calls `listener` after `tools` changed (e.g. on MCP's `notifications/tools/list_changed`). */
  onToolsChanged(listener: () => void): void;
  /** Calls `listener` when the source fails after it opened (a server that exited); the session emits it as an `error` event. */
  onError?(listener: (error: ToolrelayError) => void): void;
  /** Stop: end connections and child processes. Never rejects. */
  close(): Promise<void>;
}

const toolSourceBrand = Symbol.for("toolrelay.tool-source");

/** Mark `source` as a tool source (frozen) so that `createSession({ tools })` accepts it. */
export function defineToolSource(source: ToolSource): ToolSource {
  if (typeof source !== "object" || source === null || typeof source.open !== "function") {
    throw new ToolrelayError("INVALID_OPTIONS", "a tool source needs an open() function");
  }
  if (typeof source.label !== "string" || source.label === "") {
    throw new ToolrelayError("INVALID_OPTIONS", "a tool source needs a non-empty label");
  }
  const branded = { label: source.label, open: source.open.bind(source) };
  Object.defineProperty(branded, toolSourceBrand, { value: true });
  return Object.freeze(branded);
}

/** `true` for a value made by {@link defineToolSource} (in this or another copy of the package). */
export function isToolSource(value: unknown): value is ToolSource {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[toolSourceBrand] === true;
}
