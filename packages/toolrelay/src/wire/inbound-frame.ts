/**
 * Every frame the SDK knows how to read (R→C), as one discriminated union on
 * `type`. A frame whose `type` is not here is not an error: `decodeFrame`
 * reports it as `unknown` (runtimes add frame types).
 */
import { z } from "zod/v4";
import {
  controlRequestFrameSchema,
  streamDeltaFrameSchema,
  turnFinishedFrameSchema,
  updateDeviceStatusFrameSchema,
  updateLoopStatusFrameSchema,
  updateQueueFrameSchema,
  updateSubagentStateFrameSchema,
} from "./event-frames.js";
import { inputAcceptedFrameSchema } from "./input-frames.js";
import { listenerReadyFrameSchema, pongFrameSchema } from "./relay-frames.js";
import {
  abortMessageResponseFrameSchema,
  appServerInfoResponseFrameSchema,
  runtimeExternalToolsUpdateResponseFrameSchema,
  runtimeStartResponseFrameSchema,
  syncResponseFrameSchema,
} from "./runtime-frames.js";
import { externalToolCallRequestFrameSchema } from "./tool-call-frames.js";

const inboundFrameSchemas = [
  runtimeStartResponseFrameSchema,
  runtimeExternalToolsUpdateResponseFrameSchema,
  externalToolCallRequestFrameSchema,
  inputAcceptedFrameSchema,
  streamDeltaFrameSchema,
  updateLoopStatusFrameSchema,
  updateDeviceStatusFrameSchema,
  updateQueueFrameSchema,
  updateSubagentStateFrameSchema,
  turnFinishedFrameSchema,
  abortMessageResponseFrameSchema,
  syncResponseFrameSchema,
  controlRequestFrameSchema,
  appServerInfoResponseFrameSchema,
  pongFrameSchema,
  listenerReadyFrameSchema,
] as const;

/** Every R→C frame the SDK models. */
export const inboundFrameSchema = z.discriminatedUnion("type", inboundFrameSchemas);
export type InboundFrame = z.infer<typeof inboundFrameSchema>;
export type InboundFrameType = InboundFrame["type"];

/** The schema of each known inbound `type` (what `decodeFrame` checks a frame against). */
export const inboundFrameSchemasByType: ReadonlyMap<string, z.ZodType> = new Map(
  inboundFrameSchemas.map((schema) => [schema.shape.type.value, schema] as const),
);
