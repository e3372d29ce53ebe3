/**
 * Limits of the Letta Code runtime that several layers must agree on (the wire schema, defineTool,
 * the call table's defaults, the session's reading of the runtime's copy, the scripted runtime that
 * plays the runtime in tests). Each is the runtime's own; see docs/protocol.md#clamping.
 */

/** The runtime's `TOOL_RETURN_MAX_CHARS`: a longer tool result text reaches the model clamped. */
export const RUNTIME_TOOL_RETURN_MAX_CHARS = 32_000;

/** The runtime stops waiting for a client tool after this long (ms) and tells nobody; the most a tool's `timeout_ms` may say. */
export const RUNTIME_MAX_TOOL_TIMEOUT_MS = 300_000;

/** The least a tool definition's `timeout_ms` may say (ms): newer runtimes validate 1,000–300,000. */
export const RUNTIME_MIN_TOOL_TIMEOUT_MS = 1_000;
