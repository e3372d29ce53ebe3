/**
 * One live connection to an MCP server, for one session: the SDK's `Client`
 * over our stdio transport (or the SDK's Streamable HTTP transport), the
 * server's tools as client tools, and the server's state.
 *
 * - Listing reads every page (`nextCursor`) and is redone on
 *   `notifications/tools/list_changed` (one listing at a time; a change during
 *   a listing lists again after it).
 * - A call goes out as `tools/call` with the call's signal: when the SDK gives
 *   up on the call (timeout, abort, close) the SDK sends MCP's
 *   `notifications/cancelled`.
 * - Closing ends what the connection holds on the server: a stdio child's
 *   process group, or a Streamable HTTP server's session (MCP's HTTP `DELETE`
 *   with the session id, waited for {@link SESSION_END_TIMEOUT_MS} at most).
 * - A server that stops (a crashed child, a closed connection) makes every
 *   one of its tools answer an error that says so, and is reported once to
 *   the session (`TOOL_SOURCE_FAILED`); the session stays up.
 * - A tool named like one of the runtime's own tools (`Read`, `Bash`, ...)
 *   fails the start (`INVALID_TOOL_DEFINITION`, cause `RESERVED_TOOL_NAME`):
 *   an `error` event could not be heard yet, and leaving the tool out
 *   unheard would send the model's `Read` to the runtime's own tool. Listed
 *   after a change, it is left out (the rest of the new list applies) and
 *   reported once as an `error` event that names it and `prefix`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { ToolrelayError } from "../errors.js";
import { systemTimers, unrefTimer, type TimerHandle, type Timers } from "../internal/timers.js";
import { PACKAGE_VERSION } from "../internal/package-version.js";
import type { ClientTool, OpenToolSource, ToolResult } from "../tools/index.js";
import { isReservedNameRefusal, mcpClientTool } from "./mcp-client-tool.js";
import { McpStdioTransport } from "./mcp-stdio-transport.js";
import type { McpToolInfo, ResolvedMcpOptions } from "./mcp-tools-options.js";
import { mcpToolResult, type McpCallResult } from "./mcp-tool-result.js";

/** The SDK's own request timer runs this much longer than the call's deadline, so the session's timeout answers first. */
const SDK_TIMEOUT_MARGIN_MS = 5_000;
/** A server that pages forever is stopped here. */
const MAX_LIST_PAGES = 1_000;
const CLIENT_INFO = { name: "toolrelay", version: PACKAGE_VERSION };
/** How long `close()` waits for a Streamable HTTP server to answer the `DELETE` that ends its session. */
export const SESSION_END_TIMEOUT_MS = 2_000;

export class McpConnection implements OpenToolSource {
  readonly #options: ResolvedMcpOptions;
  readonly #client: Client;
  readonly #transport: Transport;
  readonly #timers: Timers;
  #tools: readonly ClientTool[] = [];
  #changeListeners: Array<() => void> = [];
  #errorListeners: Array<(error: ToolrelayError) => void> = [];
  /** Why the server cannot be called any more (set once). */
  #down: string | undefined;
  #closing = false;
  #listing: Promise<void> | undefined;
  #listAgain = false;
  /** MCP names of tools left out of a relisting for a reserved name (each reported once). */
  #reportedLeftOut = new Set<string>();

  // biome-ignore lint/style/useConsistentMemberAccessibility: a constructor cannot be #private; open() is the only way in
  private constructor(options: ResolvedMcpOptions, timers: Timers) {
    this.#options = options;
    this.#timers = timers;
    this.#transport =
      options.kind === "stdio"
        ? new McpStdioTransport({ command: options.command, args: options.args, env: options.env, cwd: options.cwd })
        : new StreamableHTTPClientTransport(options.url, { requestInit: { headers: options.headers } });
    this.#client = new Client(CLIENT_INFO, { capabilities: {} });
    this.#client.onclose = () => this.#markDown();
    this.#client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#relist());
  }

  /**
   * Start the server (or connect), `initialize`, and list its tools, within
   * `startTimeoutMs`. Rejects with `TOOL_SOURCE_FAILED` (after stopping what
   * it started) or `INVALID_TOOL_DEFINITION` for a tool that cannot be a
   * client tool.
   */
  static async open(options: ResolvedMcpOptions, signal: AbortSignal, timers: Timers = systemTimers): Promise<McpConnection> {
    const connection = new McpConnection(options, timers);
    const deadline = Date.now() + options.startTimeoutMs;
    const remaining = () => Math.max(1, deadline - Date.now());
    try {
      await connection.#client.connect(connection.#transport, { timeout: remaining(), signal });
      connection.#tools = await connection.#listTools({ timeout: remaining(), signal });
      return connection;
    } catch (error) {
      const reason = connection.#exitDescription() ?? (error instanceof Error ? error.message : String(error));
      await connection.close();
      if (error instanceof ToolrelayError) throw error;
      throw new ToolrelayError(
        "TOOL_SOURCE_FAILED",
        `${connection.label} did not start: ${reason.replace(/\.$/, "")}.${connection.#stderrNote()}`,
        {
          cause: error,
          details: connection.#details(),
        },
      );
    }
  }

  /** `MCP server "<name>"`. */
  get label(): string {
    return `MCP server "${this.#options.name}"`;
  }

  /** The child's process id (stdio only). */
  get pid(): number | undefined {
    return this.#transport instanceof McpStdioTransport ? this.#transport.pid : undefined;
  }

  get tools(): readonly ClientTool[] {
    return this.#tools;
  }

  onToolsChanged(listener: () => void): void {
    this.#changeListeners.push(listener);
  }

  onError(listener: (error: ToolrelayError) => void): void {
    this.#errorListeners.push(listener);
  }

  /** Call one tool by its MCP name. Throws (a tool error for the model) when the server is down or the call fails. */
  async callTool(mcpName: string, input: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    if (this.#down !== undefined) throw new Error(this.#down);
    try {
      const result = await this.#client.callTool({ name: mcpName, arguments: input }, undefined, {
        signal,
        timeout: this.#options.callTimeoutMs + SDK_TIMEOUT_MARGIN_MS,
      });
      return mcpToolResult(result as McpCallResult);
    } catch (error) {
      // The server died under the call: say that, not the SDK's "Connection closed".
      if (this.#down !== undefined) throw new Error(this.#down);
      throw error;
    }
  }

  /**
   * Close the client, and end what it holds on the server: the server process (its whole process
   * group), or the server's Streamable HTTP session. Never rejects.
   */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#transport instanceof StreamableHTTPClientTransport) await this.#endHttpSession(this.#transport);
    await this.#client.close().catch(() => undefined);
    await this.#transport.close().catch(() => undefined);
  }

  /**
   * MCP's end of a Streamable HTTP session: `DELETE` with the session id, which the server answers
   * by dropping the session (or 405: it keeps none to end). Without it the server holds the session
   * until it expires, if ever. Nothing is sent when no session was made; a server that does not
   * answer within {@link SESSION_END_TIMEOUT_MS} is left (closing the client then aborts the request).
   */
  async #endHttpSession(transport: StreamableHTTPClientTransport): Promise<void> {
    let timer: TimerHandle | undefined;
    const giveUp = new Promise<void>((resolve) => {
      timer = this.#timers.setTimeout(resolve, SESSION_END_TIMEOUT_MS);
      unrefTimer(timer);
    });
    try {
      await Promise.race([transport.terminateSession().catch(() => undefined), giveUp]);
    } finally {
      if (timer !== undefined) this.#timers.clearTimeout(timer);
    }
  }

  /**
   * Every page of `tools/list`, as client tools. A tool named like one of the runtime's own tools
   * fails the listing, unless `leftOut` is given (a relisting): then it is left out and its error
   * pushed there.
   */
  async #listTools(options: { timeout: number; signal?: AbortSignal | undefined }, leftOut?: ToolrelayError[]): Promise<ClientTool[]> {
    const listed: McpToolInfo[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.#client.listTools(cursor === undefined ? {} : { cursor }, options);
      listed.push(...(result.tools as McpToolInfo[]));
      cursor = result.nextCursor;
      if (cursor === undefined) return this.#clientTools(listed, leftOut);
      if (cursors.has(cursor)) throw new Error(`tools/list returned the cursor ${JSON.stringify(cursor)} twice`);
      cursors.add(cursor);
    }
    throw new Error(`tools/list did not end within ${MAX_LIST_PAGES} pages`);
  }

  #clientTools(listed: readonly McpToolInfo[], leftOut: ToolrelayError[] | undefined): ClientTool[] {
    const offered = this.#options.filter ? listed.filter((tool) => this.#options.filter!(tool)) : listed;
    const tools: ClientTool[] = [];
    for (const tool of offered) {
      try {
        tools.push(
          mcpClientTool(tool, {
            prefix: this.#options.prefix,
            server: this.label,
            timeoutMs: this.#options.callTimeoutMs,
            needsApproval: this.#options.needsApproval,
            call: (name, input, signal) => this.callTool(name, input, signal),
          }),
        );
      } catch (error) {
        if (leftOut === undefined || !isReservedNameRefusal(error)) throw error;
        leftOut.push(error);
      }
    }
    return tools;
  }

  /** Follow `notifications/tools/list_changed`: one listing at a time, again if another change came meanwhile. */
  #relist(): void {
    if (this.#closing || this.#down !== undefined) return;
    if (this.#listing) {
      this.#listAgain = true;
      return;
    }
    this.#listing = (async () => {
      do {
        this.#listAgain = false;
        try {
          const leftOut: ToolrelayError[] = [];
          const tools = await this.#listTools({ timeout: this.#options.startTimeoutMs }, leftOut);
          if (this.#closing) return;
          this.#tools = tools;
          for (const listener of this.#changeListeners) listener();
          for (const refusal of leftOut) this.#reportLeftOut(refusal);
        } catch (error) {
          if (this.#closing) return;
          this.#report(
            error instanceof ToolrelayError
              ? error
              : new ToolrelayError(
                  "TOOL_SOURCE_FAILED",
                  `${this.label} changed its tools but listing them failed; the previous tools stay: ${errorMessage(error)}`,
                  {
                    cause: error,
                  },
                ),
          );
        }
      } while (this.#listAgain && !this.#closing);
    })().finally(() => {
      this.#listing = undefined;
    });
  }

  /** `exited with code 3`, `was killed by SIGKILL`, or `undefined` while the child runs (or for HTTP). */
  #exitDescription(): string | undefined {
    const exit = this.#transport instanceof McpStdioTransport ? this.#transport.exit : undefined;
    if (!exit) return undefined;
    return exit.signal ? `it was killed by ${exit.signal}` : `it exited with code ${String(exit.code)}`;
  }

  #markDown(): void {
    if (this.#down !== undefined || this.#closing) return;
    const how = this.#exitDescription()?.replace(/^it /, "") ?? "closed the connection";
    // The model reads this; the server's stderr goes to the session's error event only.
    this.#down = `${this.label} ${how}; its tools cannot be called in this session.`;
    this.#report(new ToolrelayError("TOOL_SOURCE_FAILED", `${this.#down}${this.#stderrNote()}`, { details: this.#details() }));
  }

  /** A tool of a relisting left out for its reserved name: reported once per MCP name for this connection. */
  #reportLeftOut(refusal: ToolrelayError): void {
    const tool = String(refusal.details?.tool);
    if (this.#reportedLeftOut.has(tool)) return;
    this.#reportedLeftOut.add(tool);
    this.#report(
      new ToolrelayError(
        "INVALID_TOOL_DEFINITION",
        `${this.label} changed its tools; the tool ${JSON.stringify(tool)} is left out (the others are updated): ${refusal.message}`,
        { cause: refusal.cause, details: { ...refusal.details, server: this.#options.name } },
      ),
    );
  }

  #report(error: ToolrelayError): void {
    for (const listener of this.#errorListeners) listener(error);
  }

  #stderrNote(): string {
    if (!(this.#transport instanceof McpStdioTransport)) return "";
    const tail = this.#transport.stderrTail().trim();
    return tail === "" ? "" : ` Its last output: ${tail.slice(-600)}`;
  }

  #details(): Record<string, unknown> {
    const exit = this.#transport instanceof McpStdioTransport ? this.#transport.exit : undefined;
    return { server: this.#options.name, ...(exit ? { exitCode: exit.code, signal: exit.signal } : {}) };
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
