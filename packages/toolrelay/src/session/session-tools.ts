/**
 * The session's tool set, in one place: the plain tools given to
 * `createSession`, the open tool sources (MCP servers), and the registry
 * built from both. The registry is immutable; when a source's tools change,
 * a new one is built and replaces the old as a whole, and the session
 * re-registers it with the runtime (`runtime_external_tools_update`).
 *
 * Lifecycle: `open()` before `runtime_start` (a source that fails to open
 * fails the session's start, and the sources already open are closed);
 * `close()` when the session closes.
 */
import { ToolrelayError } from "../errors.js";
import {
  isClientTool,
  isToolSource,
  ToolRegistry,
  type ClientTool,
  type OpenToolSource,
  type ToolLookup,
  type ToolSource,
} from "../tools/index.js";
import type { ExternalToolsGroup } from "../wire/index.js";

/** What `createSession({ tools })` accepts: tools made with `defineTool`, and tool sources such as `mcpTools(...)`. */
export type SessionToolItem = ClientTool | ToolSource;

export class SessionTools implements ToolLookup {
  readonly #plain: readonly ClientTool[];
  readonly #sources: readonly ToolSource[];
  readonly #defaultTimeoutMs: number;
  #open: OpenToolSource[] = [];
  #registry: ToolRegistry;
  #listeners: Array<(registry: ToolRegistry) => void> = [];
  #onError: ((error: ToolrelayError) => void) | undefined;
  /** Errors reported before anyone listened (between open() and the session's start). */
  #pendingErrors: ToolrelayError[] = [];
  #closed = false;

  /**
   * Sorts `items` into tools and sources and checks the plain tools at once
   * (`DUPLICATE_TOOL_NAME`, `INVALID_TOOL_DEFINITION` for an item that is
   * neither). `defaultTimeoutMs` is the session's `toolTimeoutMs`, advertised
   * for tools without their own.
   */
  constructor(items: readonly SessionToolItem[], defaultTimeoutMs: number) {
    const plain: ClientTool[] = [];
    const sources: ToolSource[] = [];
    items.forEach((item, index) => {
      if (isToolSource(item)) sources.push(item);
      else if (isClientTool(item)) plain.push(item);
      else throw new ToolrelayError("INVALID_TOOL_DEFINITION", `tools[${index}] was not made with defineTool() or mcpTools()`);
    });
    this.#plain = plain;
    this.#sources = sources;
    this.#defaultTimeoutMs = defaultTimeoutMs;
    this.#registry = new ToolRegistry(plain);
  }

  /** The current registry (replaced as a whole when a source's tools change). */
  get registry(): ToolRegistry {
    return this.#registry;
  }

  get(name: string): ClientTool | undefined {
    return this.#registry.get(name);
  }

  names(): string[] {
    return this.#registry.names();
  }

  /** The current tool set as the runtime registers it. */
  wireGroups(): ExternalToolsGroup[] {
    return this.#registry.toWireGroups(this.#defaultTimeoutMs);
  }

  /**
   * Open every source (in parallel) and build the registry. Rejects with the
   * first failure (after closing whatever did open), or `DUPLICATE_TOOL_NAME`
   * when two tools of the set share a name.
   */
  async open(signal: AbortSignal): Promise<void> {
    const results = await Promise.allSettled(this.#sources.map((source) => source.open({ signal })));
    const opened = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    this.#open = opened;
    const failure = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
    if (failure) {
      await this.close();
      const reason: unknown = failure.reason;
      if (reason instanceof ToolrelayError) throw reason;
      throw new ToolrelayError(
        "CONNECT_FAILED",
        `a tool source failed to start: ${reason instanceof Error ? reason.message : String(reason)}`,
        { cause: reason },
      );
    }
    try {
      this.#registry = this.#build();
    } catch (error) {
      await this.close();
      throw error;
    }
    for (const source of opened) {
      source.onToolsChanged(() => this.#rebuild());
      source.onError?.((error) => this.#report(error));
    }
  }

  /** Calls `listener` with the new registry after a source's tools changed. */
  onChange(listener: (registry: ToolRegistry) => void): void {
    this.#listeners.push(listener);
  }

  /** Where a tool set that cannot be built (two tools with one name) is reported; the previous set stays. */
  onError(listener: (error: ToolrelayError) => void): void {
    this.#onError = listener;
    for (const error of this.#pendingErrors.splice(0)) listener(error);
  }

  /** Close every source (in parallel). Idempotent; never rejects. */
  async close(): Promise<void> {
    this.#closed = true;
    const open = this.#open.splice(0);
    await Promise.all(open.map((source) => source.close().catch(() => undefined)));
  }

  #build(): ToolRegistry {
    return new ToolRegistry([...this.#plain, ...this.#open.flatMap((source) => source.tools)]);
  }

  #rebuild(): void {
    if (this.#closed) return;
    let registry: ToolRegistry;
    try {
      registry = this.#build();
    } catch (error) {
      this.#report(
        error instanceof ToolrelayError
          ? error
          : new ToolrelayError("INVALID_TOOL_DEFINITION", "the changed tool set cannot be built", { cause: error }),
      );
      return;
    }
    this.#registry = registry;
    for (const listener of this.#listeners) listener(registry);
  }

  #report(error: ToolrelayError): void {
    if (this.#closed) return;
    if (this.#onError) this.#onError(error);
    else this.#pendingErrors.push(error);
  }
}
