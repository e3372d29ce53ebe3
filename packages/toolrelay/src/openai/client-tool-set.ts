/**
 * The tools a chat client declared, as one toolrelay tool source. Each request's `tools` replace
 * the set ({@link ClientToolSet.update}); when they differ from the registered ones, the session
 * re-registers them with the runtime (`runtime_external_tools_update`). Every tool is advertised
 * with the client's own JSON Schema and not validated here (`validate: false`): the client runs
 * the tool and validates its own arguments. A tool named like one of the runtime's own tools
 * (`Read`, `Bash`, ...) is registered with `overridesRuntimeTool: true`: the client asked for it
 * by name, so it replaces the runtime's tool of that name for the thread. A call is handed to the
 * thread's `execute`, which resolves only when the client sends the result in a later HTTP
 * request.
 */
import { canonicalJson } from "../internal/canonical-json.js";
import { isToolrelayError } from "../errors.js";
import {
  defineTool,
  defineToolSource,
  type ClientTool,
  type JsonSchemaObject,
  type OpenToolSource,
  type ToolCallContext,
  type ToolSource,
} from "../tools/index.js";
import { ChatApiError } from "./chat-api-error.js";
import type { ChatTool } from "./chat-request.js";

/** Runs one client tool call: resolves with the text the model reads. */
export type ClientToolExecutor = (call: { tool: ChatTool; input: unknown; context: ToolCallContext }) => Promise<string>;

export class ClientToolSet {
  #declared: readonly ChatTool[] = [];
  #tools: readonly ClientTool[] = [];
  #signature = canonicalJson([]);
  #listeners: Array<() => void> = [];
  readonly #execute: ClientToolExecutor;
  readonly #timeoutMs: number;

  /** `timeoutMs`: how long a call waits for the client's result (the bridge's `toolResultTimeoutMs`). */
  constructor(execute: ClientToolExecutor, timeoutMs: number) {
    this.#execute = execute;
    this.#timeoutMs = timeoutMs;
  }

  /** The tools registered now, as the client declared them (names normalised). */
  get declared(): readonly ChatTool[] {
    return this.#declared;
  }

  /** The declared tool of that (normalised) name. */
  get(name: string): ChatTool | undefined {
    return this.#declared.find((tool) => tool.name === name);
  }

  /**
   * Replace the set. Returns `true` when it changed (the session then re-registers it). Throws a
   * 400 {@link ChatApiError} naming the tool when one cannot be offered (a name the runtime does
   * not accept, parameters that are not an object schema); the previous set stays.
   */
  update(tools: readonly ChatTool[]): boolean {
    const signature = canonicalJson(tools.map((tool) => [tool.name, tool.description ?? null, tool.parameters]));
    if (signature === this.#signature) return false;
    const built = tools.map((tool, index) => this.#build(tool, index));
    this.#declared = tools;
    this.#tools = built;
    this.#signature = signature;
    for (const listener of this.#listeners) listener();
    return true;
  }

  /** The tool source to pass to `createSession({ tools })`. */
  source(): ToolSource {
    const open: OpenToolSource = {
      get tools() {
        return set.#tools;
      },
      onToolsChanged: (listener) => {
        this.#listeners.push(listener);
      },
      close: async () => {
        this.#listeners = [];
      },
    };
    const set = this;
    return defineToolSource({ label: "the chat client's tools", open: async () => open });
  }

  #build(tool: ChatTool, index: number): ClientTool {
    // OpenAI accepts `{ properties }` without a type; the runtime needs an object schema.
    const parameters = ("type" in tool.parameters ? tool.parameters : { type: "object", ...tool.parameters }) as JsonSchemaObject;
    try {
      return defineTool({
        name: tool.name,
        description: tool.description?.trim() ? tool.description : `The client's tool ${tool.name}.`,
        inputSchema: parameters,
        validate: false,
        timeoutMs: this.#timeoutMs,
        // The client declared this tool in its request and runs it itself: a name of one of the
        // runtime's own tools (Read, Bash, ...) is the client's on purpose, and replaces the
        // runtime's tool of that name for this thread (docs/openai-bridge.md).
        overridesRuntimeTool: true,
        execute: (input, context) => this.#execute({ tool, input, context }),
      });
    } catch (error) {
      const reason = isToolrelayError(error) ? error.message : String(error);
      throw ChatApiError.invalid(
        "invalid_tool",
        `tools[${index}] ("${tool.declaredName}") cannot be offered to the agent: ${reason}`,
        `tools[${index}]`,
      );
    }
  }
}
