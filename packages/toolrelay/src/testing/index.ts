/**
 * `toolrelay/testing`: the scripted runtime (a loopback server that speaks the Letta Code
 * app-server protocol, with a script in place of the model) and the fault proxy, for testing
 * your own tools. See docs/testing.md.
 *
 * @module toolrelay/testing
 */
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
// The clock both take (`timers` option), also exported by `toolrelay`.
export type { Timers, TimerHandle } from "../internal/timers.js";
