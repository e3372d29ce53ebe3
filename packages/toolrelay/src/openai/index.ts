/**
 * `toolrelay/openai`: an OpenAI-compatible chat bridge. Any chat client that speaks OpenAI chat
 * completions (with its own `tools`) drives a Letta Code agent through toolrelay sessions on any
 * backend; the agent's calls to the client's tools go back to the client as `tool_calls`, and
 * the next request's `role: "tool"` messages settle them. Also the `toolrelay-openai` CLI. See
 * docs/openai-bridge.md.
 *
 * @module toolrelay/openai
 */
export { startOpenAiBridge, type OpenAiBridge } from "./openai-bridge.js";
export type { OpenAiBridgeOptions, BridgeSessionOptions, BridgeWorkspace, ThreadKeySources, ToolExecution } from "./bridge-options.js";
export { defaultToolNudge } from "./resolve-bridge-options.js";
export { normalizeToolName } from "./tool-names.js";
export type { ThreadInfo } from "./thread-directory.js";
export type { ChatApiErrorBody, ChatApiErrorType } from "./chat-api-error.js";
