/**
 * Transport-level frames of the cloud status relay (docs/protocol.md#cloud-delivery-rules,
 * docs/protocol.md#cloud-heartbeat, docs/protocol.md#transport-frames). The local app-server answers none of them: never send `ping` or
 * `ack` there (it drops them).
 */
import { z } from "zod/v4";

/** C→R: app-level heartbeat on each relay socket. */
export const pingFrameSchema = z.strictObject({ type: z.literal("ping") });
export type PingFrame = z.infer<typeof pingFrameSchema>;

/** R→C: the relay's heartbeat answer. */
export const pongFrameSchema = z.looseObject({ type: z.literal("pong") });
export type PongFrame = z.infer<typeof pongFrameSchema>;

/** C→R: acknowledge a relay delivery `seq`, on the socket it arrived on. */
export const ackFrameSchema = z.strictObject({
  type: z.literal("ack"),
  /** The `seq` of the frame being acknowledged, echoed as received. */
  seq: z.number(),
});
export type AckFrame = z.infer<typeof ackFrameSchema>;

/**
 * relay→listener: a paired listener socket generation is ready (SDK sockets never see it). Both
 * values echo the socket URL's `connectionGeneration` (a string, a UUID from the real listener)
 * and `connectionAttempt` (an integer from 1).
 */
export const listenerReadyFrameSchema = z.looseObject({
  type: z.literal("listener_ready"),
  connection_generation: z.string().optional(),
  connection_attempt: z.number().int().positive().optional(),
});
export type ListenerReadyFrame = z.infer<typeof listenerReadyFrameSchema>;
