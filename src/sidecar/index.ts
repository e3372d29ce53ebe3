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
export { DEFAULT_MAX_FRAME_BYTES, SIDECAR_PROTOCOL_VERSION } from "./protocol-values.js";
export type { SidecarEncoding } from "./frame-encoding.js";
export { sidecarProtocolSchemas, type JsonSchemaDocument, type SidecarProtocolSchemas } from "./protocol-schemas.js";
export { TURN_FAULTS, type TurnFault, type ToolOutcome } from "./turn-fault.js";
export { SIDECAR_ERROR_CODES } from "./sidecar-frames.js";
export type { HostFrame, HostFrameType } from "./host-frames.js";
export type { SidecarFrame, SidecarFrameType } from "./sidecar-frames.js";
