import { decodeFrame, type DecodedFrame } from "../wire/index.js";
import { classifyInbound } from "./cloud-inbound-filter.js";
import type { CloudDeliveryStats } from "./cloud-link-options.js";
import { sendText, type SocketPair } from "./cloud-socket-pair.js";
import type { CloudChannel } from "./cloud-status-address.js";
import { IdempotencyKeyCache } from "./idempotency-key-cache.js";

/** What the delivery rules counted (the link adds the gap and sync counts). */
export type CloudDeliveryCounts = Pick<CloudDeliveryStats, "acksSent" | "duplicatesDropped" | "controlStreamDeltasDropped">;

export interface CloudInboundDeliveryOptions {
  /** Relay duplicate keys remembered. Default 1_000. */
  idempotencyKeyCapacity?: number;
  /** Called with the `event_seq` (any value, absent included) of every frame the rules keep, before it is handed on. */
  observeEventSeq: (eventSeq: unknown) => void;
}

/**
 * The cloud link's delivery rules for one inbound text frame
 * (docs/protocol.md#cloud-delivery-rules), applied strictly in arrival order:
 * ack its `seq` on the socket it came from → drop a `stream_delta` seen on
 * control (relay fan-out) → drop a repeated `idempotency_key` → hand its
 * `event_seq` to the gap watch → hand the decoded frame on. The duplicate keys
 * are remembered across reconnects (the relay redelivers after one); the acks
 * are per socket (each pair brings its own trackers).
 */
export class CloudInboundDelivery {
  #keys: IdempotencyKeyCache;
  #observeEventSeq: (eventSeq: unknown) => void;
  #counts: CloudDeliveryCounts = { acksSent: 0, duplicatesDropped: 0, controlStreamDeltasDropped: 0 };

  constructor(options: CloudInboundDeliveryOptions) {
    this.#keys = new IdempotencyKeyCache({ capacity: options.idempotencyKeyCapacity });
    this.#observeEventSeq = options.observeEventSeq;
  }

  /** Acks written and frames each rule dropped, so far. */
  get counts(): Readonly<CloudDeliveryCounts> {
    return { ...this.#counts };
  }

  /**
   * Apply the rules to `text`, which came on `channel` of `pair`. Returns the
   * decoded frame (a known, an unknown or an invalid one) to hand on, or
   * `undefined` when a rule dropped it.
   */
  accept(pair: SocketPair, channel: CloudChannel, text: string): DecodedFrame | undefined {
    const decoded = decodeFrame(text);
    const { envelope } = decoded;
    const { ack } = pair.acks[channel].receive(envelope.seq);
    if (ack !== undefined && sendText(pair[channel], ack)) this.#counts.acksSent++;
    const verdict = classifyInbound(channel, decoded.kind === "frame" ? decoded.frame.type : decoded.type, envelope, this.#keys);
    if (verdict === "control-stream-delta") {
      this.#counts.controlStreamDeltasDropped++;
      return undefined;
    }
    if (verdict === "duplicate") {
      this.#counts.duplicatesDropped++;
      return undefined;
    }
    this.#observeEventSeq(envelope.event_seq);
    return decoded;
  }
}
