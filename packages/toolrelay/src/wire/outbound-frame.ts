/**
 * Every frame the SDK sends (C→R), as one discriminated union on `type`.
 * Outbound schemas are strict: an unknown key, a wrong type, or a shape the
 * runtime would silently drop is rejected by `encodeFrame` before sending.
 */
import { z } from "zod/v4";
import { inputFrameSchema, type InputFrame } from "./input-frames.js";
import { ackFrameSchema, pingFrameSchema, type AckFrame, type PingFrame } from "./relay-frames.js";
import {
  abortMessageFrameSchema,
  appServerInfoFrameSchema,
  runtimeExternalToolsUpdateFrameSchema,
  runtimeStartFrameSchema,
  syncFrameSchema,
  type AbortMessageFrame,
  type AppServerInfoFrame,
  type RuntimeExternalToolsUpdateFrame,
  type RuntimeStartFrame,
  type SyncFrame,
} from "./runtime-frames.js";
import { externalToolCallResponseFrameSchema, type ExternalToolCallResponseFrame } from "./tool-call-frames.js";

const outboundFrameSchemas = [
  runtimeStartFrameSchema,
  runtimeExternalToolsUpdateFrameSchema,
  externalToolCallResponseFrameSchema,
  inputFrameSchema,
  abortMessageFrameSchema,
  syncFrameSchema,
  appServerInfoFrameSchema,
  pingFrameSchema,
  ackFrameSchema,
] as const;

/** Every C→R frame the SDK sends. */
export const outboundFrameSchema = z.discriminatedUnion("type", outboundFrameSchemas);

/** Every C→R frame the SDK sends (with the exclusive `result`/`error` and `decision`/`error` unions spelled out). */
export type OutboundFrame =
  | RuntimeStartFrame
  | RuntimeExternalToolsUpdateFrame
  | ExternalToolCallResponseFrame
  | InputFrame
  | AbortMessageFrame
  | SyncFrame
  | AppServerInfoFrame
  | PingFrame
  | AckFrame;
export type OutboundFrameType = OutboundFrame["type"];

/** The schema of each outbound `type`. */
export const outboundFrameSchemasByType: ReadonlyMap<string, z.ZodType> = new Map(
  outboundFrameSchemas.map((schema) => [schema.shape.type.value, schema] as const),
);
