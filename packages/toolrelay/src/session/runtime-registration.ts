import { ToolrelayError } from "../errors.js";
import { nextRequestId } from "../internal/request-id.js";
import type { RequestTracker } from "../transport/request-tracker.js";
import type { ExternalToolsGroup, RuntimeScope } from "../wire/index.js";
import { scopeOf } from "./runtime-scope-of.js";
import { buildRuntimeStartFrame, type RuntimeStartInput } from "./runtime-start-frame.js";

/** The runtime's answer to a `runtime_start` naming an agent or conversation it does not have (Letta Code 0.32: `Agent <id> not found`). */
const MISSING = /^(Agent|Conversation) (\S+) not found$/;

/**
 * Registers the session's runtime and its full tool set: `runtime_start` (at
 * connect and after every reconnect) and `runtime_external_tools_update` (the
 * per-turn shared-ownership guard). Each request has its own deadline.
 */
export class RuntimeRegistration {
  #tracker: RequestTracker;
  #input: Omit<RuntimeStartInput, "runtime" | "tools">;
  /** The current tool set, read at every send (it changes when a tool source's tools do). */
  #tools: () => ExternalToolsGroup[];
  #timeoutMs: number;

  constructor(
    tracker: RequestTracker,
    input: Omit<RuntimeStartInput, "runtime" | "tools">,
    tools: () => ExternalToolsGroup[],
    timeoutMs: number,
  ) {
    this.#tracker = tracker;
    this.#input = input;
    this.#tools = tools;
    this.#timeoutMs = timeoutMs;
  }

  /** `runtime_start` for a new runtime (`known` undefined) or the known one again; resolves with the runtime's scope. */
  async start(known: RuntimeScope | undefined): Promise<RuntimeScope> {
    const frame = buildRuntimeStartFrame({ ...this.#input, tools: this.#tools(), runtime: known });
    const response = await this.#tracker.request(frame, { responseType: "runtime_start_response", timeoutMs: this.#timeoutMs });
    if (!response.success || !response.runtime) {
      const missing = MISSING.exec(response.error ?? "");
      // One rule for every backend (docs/errors.md): something the options name that does not exist is NOT_FOUND.
      const code = missing ? "NOT_FOUND" : "REQUEST_FAILED";
      throw new ToolrelayError(code, `the runtime refused runtime_start: ${response.error ?? "no reason given"}`, {
        details: missing
          ? { error: response.error, [missing[1] === "Agent" ? "agentId" : "conversationId"]: missing[2] }
          : { error: response.error },
      });
    }
    return scopeOf(response.runtime)!;
  }

  /** Replace this runtime's tools with the full current set (another controller may have replaced them, or a tool source changed). */
  async reassertTools(runtime: RuntimeScope): Promise<void> {
    const response = await this.#tracker.request(
      {
        type: "runtime_external_tools_update",
        request_id: nextRequestId("tools-update"),
        updates: [{ runtimes: [runtime], external_tools: this.#tools() }],
      },
      { responseType: "runtime_external_tools_update_response", timeoutMs: this.#timeoutMs },
    );
    if (!response.success) {
      throw new ToolrelayError("REQUEST_FAILED", `the runtime refused to re-register the tools: ${response.error ?? "no reason given"}`);
    }
  }
}
