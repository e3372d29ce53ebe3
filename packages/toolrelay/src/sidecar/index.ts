/**
 * `toolrelay/sidecar`: toolrelay for hosts in any language. The
 * `toolrelay-sidecar` executable (this module's `startSidecar` on its stdio)
 * reads length-prefixed frames on stdin, runs SDK sessions, forwards every
 * tool call to the host and returns the host's answer to the model; a Python
 * host library lives in clients/python/. See docs/sidecar.md.
 *
 * @module toolrelay/sidecar
 */
export { startSidecar, type Sidecar, type SidecarExit, type SidecarOptions } from "./sidecar.js";
export { DEFAULT_MAX_FRAME_BYTES, SIDECAR_PROTOCOL_VERSION, SIDECAR_PROTOCOL_VERSIONS } from "./protocol-values.js";
export type { SidecarEncoding } from "./frame-encoding.js";
export { sidecarProtocolSchemas, type JsonSchemaDocument, type SidecarProtocolSchemas } from "./protocol-schemas.js";
export { TOOL_OUTCOMES, TURN_FAULTS, type ToolOutcome, type TurnFault } from "./turn-fault.js";
export { SIDECAR_ERROR_CODES, SIDECAR_FRAME_TYPES, type SidecarFrameType } from "./sidecar-frames.js";
export { HOST_FRAME_TYPES, type HostFrameType } from "./host-frames.js";

// Types that appear in the public signatures above, exported so that callers can name them.
export type { Timers, TimerHandle } from "../internal/timers.js";
