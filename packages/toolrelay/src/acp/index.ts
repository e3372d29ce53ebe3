/**
 * `toolrelay/acp`: ACP (Agent Client Protocol) editor integration. A complete agent
 * (`startAcpAgent`), and the pieces it is made of for an agent of your own: the editor tools
 * (`read_editor_buffer`, `write_via_editor`) that run through the editor over ACP, the prompt
 * bridge (ACP prompt turn ↔ toolrelay turn) and editor permission requests. Needs the peer
 * dependency `@agentclientprotocol/sdk` (2.x, its stable v1 protocol). See docs/acp.md.
 *
 * @module toolrelay/acp
 */
// The complete agent.
export { startAcpAgent, type AcpAgent, type AcpAgentOptions, type AcpEditorOptions, type AcpSessionContext } from "./acp-agent.js";
export { presentToolCall, type ToolCallPresentation, type ToolCallPresenter } from "./tool-call-presentation.js";
// The pieces, for an agent of your own.
export { runAcpPrompt, type AcpPromptSession, type RunAcpPromptOptions } from "./prompt-bridge.js";
export { createEditorTools, type EditorToolsOptions } from "./editor-tools.js";
export { editorChannelFor, type EditorChannelForOptions } from "./editor-capabilities.js";
export { editorPermissionDecider, type EditorPermissionOptions } from "./editor-permission.js";
export { WorkingRoots, type EditorPathCheck, type PathFileSystem, type WorkingRootsOptions } from "./working-roots.js";
// What a channel of your own implements (an editor reached another way than ACP's fs/* methods).
export { EditorRequestError, type EditorCapabilities, type EditorChannel, type EditorRequestOptions } from "./editor-channel.js";
