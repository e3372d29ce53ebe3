export { startScriptedRuntime } from "./scripted-runtime.js";
export type {
  ScriptedCallRecord,
  ScriptedCallStatus,
  ScriptedContentBlock,
  ScriptedFrameRecord,
  ScriptedPermissionMode,
  ScriptedRegistration,
  ScriptedRuntime,
  ScriptedRuntimeScope,
  ScriptedSubagent,
  ScriptedSubagentOptions,
  ScriptedToolCallSpec,
  ScriptedToolResult,
  ScriptedTurn,
  ScriptedVisibleTool,
  StartScriptedRuntimeOptions,
  TurnScript,
} from "./scripted-runtime-types.js";
export { startFaultProxy, type FaultProxy, type FaultProxyStats, type StartFaultProxyOptions } from "./fault-proxy.js";
