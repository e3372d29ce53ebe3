import { ToolrelayError } from "../errors.js";
import type { SessionOptions } from "./session-options.js";

function fail(message: string): never {
  throw new ToolrelayError("INVALID_OPTIONS", message);
}

function checkPositive(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) fail(`${name} must be a positive number of milliseconds or bytes, got ${String(value)}`);
}

/** Reject bad options before anything is started, each with a message naming the option. */
export function validateSessionOptions(options: SessionOptions): void {
  if (typeof options !== "object" || options === null) fail("createSession needs an options object");
  const backend = options.backend as { kind?: unknown } | undefined;
  if (!backend || typeof backend !== "object") fail('options.backend is required: { kind: "local", url } or { kind: "cloud", ... }');
  if (backend.kind !== "local" && backend.kind !== "cloud" && backend.kind !== "link") {
    fail(`options.backend.kind must be "local" or "cloud", got ${JSON.stringify(backend.kind)}`);
  }
  const agent = options.agent as { id?: unknown; create?: { model?: unknown } } | undefined;
  if (!agent || typeof agent !== "object") fail("options.agent is required: { id } or { create: { model } }");
  if ("id" in agent && "create" in agent) fail("options.agent takes either id or create, not both");
  if ("id" in agent) {
    if (typeof agent.id !== "string" || agent.id.trim() === "") fail("options.agent.id must be a non-empty string");
  } else if (!agent.create || typeof agent.create.model !== "string" || agent.create.model.trim() === "") {
    fail("options.agent.create.model must name a model handle, e.g. \"openai/gpt-5\"");
  }
  const conversation = options.conversation;
  if (conversation !== undefined && (typeof conversation !== "string" || conversation.trim() === "")) {
    fail('options.conversation must be "new", "default" or a conversation id');
  }
  if (options.tools !== undefined && !Array.isArray(options.tools)) fail("options.tools must be an array of tools made with defineTool() or mcpTools()");
  checkPositive("options.toolTimeoutMs", options.toolTimeoutMs);
  checkPositive("options.maxInputBytes", options.maxInputBytes);
  checkPositive("options.maxResultChars", options.maxResultChars);
  checkPositive("options.reconnectGraceMs", options.reconnectGraceMs);
  checkPositive("options.requestTimeoutMs", options.requestTimeoutMs);
  if (options.turnStallProbeMs !== undefined && options.turnStallProbeMs !== 0) checkPositive("options.turnStallProbeMs", options.turnStallProbeMs);
  if (options.workspace !== undefined && options.workspace !== "isolated") {
    const cwd = (options.workspace as { cwd?: unknown }).cwd;
    if (typeof cwd !== "string" || cwd === "") fail('options.workspace must be "isolated" or { cwd: "/absolute/path" }');
  }
  if (options.workspace === "isolated" && backend.kind === "cloud") {
    fail('options.workspace "isolated" applies to the local backend only: a cloud runtime\'s cwd is on the sandbox');
  }
  if (options.canUseTool !== undefined && typeof options.canUseTool !== "function") fail("options.canUseTool must be a function");
}
