/**
 * `toolrelay/acp`: ACP (Agent Client Protocol) editor integration. Editor tools
 * (`read_editor_buffer`, `write_via_editor`) that run through the editor over
 * ACP, the prompt bridge (ACP prompt turn ↔ toolrelay turn), editor permission
 * requests, and a complete agent (`startAcpAgent`). Needs the peer dependency
 * `@agentclientprotocol/sdk` (2.x, its stable v1 protocol). See docs/acp.md.
 *
 * @module toolrelay/acp
 */
export { startAcpAgent, type AcpAgent, type AcpAgentOptions, type AcpEditorOptions, type AcpSessionContext } from "./acp-agent.js";
export { runAcpPrompt, acpStopReason, type AcpPromptSession, type RunAcpPromptOptions } from "./prompt-bridge.js";
export { createEditorTools, type EditorToolsOptions } from "./editor-tools.js";
export { editorPermissionDecider, type EditorPermissionOptions } from "./editor-permission.js";
export {
  acpFsCapabilities,
  editorChannelFor,
  editorToolNames,
  EDITOR_TOOL_CAPABILITY,
  type EditorChannelForOptions,
  type EditorToolName,
} from "./editor-capabilities.js";
export { EditorRequestError, type EditorCapabilities, type EditorChannel, type EditorRequestOptions } from "./editor-channel.js";
export { AcpFsChannel, type AcpFsChannelOptions } from "./acp-fs-channel.js";
export { WorkingRoots, isInside, nodePathFileSystem, type EditorPathCheck, type PathFileSystem, type WorkingRootsOptions } from "./working-roots.js";
export { bufferHash, fullBufferHash, hashMatches, sliceLines, countLines, BUFFER_HASH_LENGTH, type BufferSlice } from "./editor-buffer.js";
export { presentToolCall, type ToolCallPresentation, type ToolCallPresenter } from "./tool-call-presentation.js";
export { ToolCallReporter, type ToolCallReporterOptions } from "./tool-call-reporter.js";
export { messageFromPrompt } from "./prompt-content.js";
