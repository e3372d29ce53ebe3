import type { FrameEnvelope } from "../wire/index.js";
import type { CloudChannel } from "./cloud-status-address.js";
import type { IdempotencyKeyCache } from "./idempotency-key-cache.js";

/** What the cloud link does with one inbound frame, after it has been acked. */
export type InboundVerdict = "forward" | "control-stream-delta" | "duplicate";

/**
 * The relay's delivery rules (docs/protocol.md#cloud-delivery-rules), in order: a `stream_delta`
 * on the control socket is a gateway fan-out copy; a frame whose
 * `idempotency_key` was already seen is a relay duplicate. Pure apart from
 * recording the key.
 */
export function classifyInbound(
  channel: CloudChannel,
  type: string | undefined,
  envelope: FrameEnvelope,
  keys: IdempotencyKeyCache,
): InboundVerdict {
  if (channel === "control" && type === "stream_delta") return "control-stream-delta";
  if (typeof envelope.idempotency_key === "string" && keys.seen(envelope.idempotency_key)) return "duplicate";
  return "forward";
}
