import type { Timers } from "../internal/timers.js";
import { decodeFrame, type DecodedFrame, type FrameEnvelope, type OutboundFrame } from "../wire/index.js";
import type { CloudDeliveryStats, CloudRuntimeAddress } from "./cloud-link-options.js";
import type { CloudChannel } from "./cloud-status-address.js";
import { CloudSyncTrigger } from "./cloud-sync-trigger.js";
import { IdempotencyKeyCache } from "./idempotency-key-cache.js";
import { writeText, type LinkSockets } from "./link-sockets.js";
import { SequenceAckTracker } from "./sequence-ack-tracker.js";
import { EventSequenceGapDetector } from "./sequence-gap-detector.js";
import type { DeliveryRules } from "./socket-link-options.js";

/** What the cloud link does with one inbound frame, after it has been acked. */
export type InboundVerdict = "forward" | "control-stream-delta" | "duplicate";

/**
 * The relay's delivery rules (docs/protocol.md#cloud-delivery-rules), in order: a `stream_delta`
 * on the control socket is a gateway fan-out copy; a frame whose `idempotency_key` was already
 * seen is a relay duplicate. Pure apart from recording the key.
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

export interface CloudDeliveryOptions {
  timers: Timers;
  /** Relay duplicate keys remembered. Default 1_000. */
  idempotencyKeyCapacity?: number | undefined;
  /** How long a missing `event_seq` may take to arrive on the other socket before it counts as lost, in ms. Default 1_000. */
  reorderWindowMs?: number | undefined;
  /** Gap syncs requested within this window are sent as one, in ms. Default 250. */
  debounceMs?: number | undefined;
  /** Least time between two gap syncs at first, in ms. Default 5_000. */
  minIntervalMs?: number | undefined;
  /** Gap syncs back off (doubling) while holes keep coming, up to this, in ms. Default 60_000. */
  maxIntervalMs?: number | undefined;
  /** The runtime to re-sync (read when a sync is due); no sync while it lacks an agent or a conversation. */
  runtime: () => Readonly<CloudRuntimeAddress>;
  /** Write the sync frame on the control socket; `false` when the link is not open (the frame is then dropped). */
  send: (frame: OutboundFrame) => boolean;
}

/**
 * What the cloud link adds to the shared link base: the relay's delivery envelope
 * (docs/protocol.md#cloud-delivery-rules). Each inbound text frame, strictly in arrival order: ack
 * its `seq` on the socket it came from → drop a `stream_delta` seen on control (relay fan-out) →
 * drop a repeated `idempotency_key` → hand its `event_seq` to the gap watch → hand the decoded
 * frame on. The duplicate keys are remembered across reconnects (the relay redelivers after one);
 * the acks are per socket (each connection brings new trackers).
 *
 * Lost events: a hole in `event_seq` seen **while a turn runs** asks for one debounced, backed-off
 * `sync` of the runtime (an idle session sends none: a hole is then another runtime's traffic, or
 * nothing a session waits for). A new connection starts a new watermark and resets the back-off; a
 * drop forgets the holes and the pending sync (the session's post-reconnect sync supersedes it).
 */
export class CloudDelivery implements DeliveryRules<CloudChannel> {
  #options: CloudDeliveryOptions;
  #keys: IdempotencyKeyCache;
  #sockets: LinkSockets<CloudChannel> | undefined;
  #acks: Record<CloudChannel, SequenceAckTracker> = { control: new SequenceAckTracker(), stream: new SequenceAckTracker() };
  #gaps: EventSequenceGapDetector;
  #sync: CloudSyncTrigger;
  /** A turn is running (the session says so): only then are `event_seq` holes worth a sync. */
  #turnActive = false;
  #counts: Omit<CloudDeliveryStats, "syncsSent"> = { acksSent: 0, duplicatesDropped: 0, controlStreamDeltasDropped: 0, gapsDetected: 0 };

  constructor(options: CloudDeliveryOptions) {
    this.#options = options;
    this.#keys = new IdempotencyKeyCache({ capacity: options.idempotencyKeyCapacity });
    this.#sync = new CloudSyncTrigger({
      timers: options.timers,
      debounceMs: options.debounceMs,
      minIntervalMs: options.minIntervalMs,
      maxIntervalMs: options.maxIntervalMs,
      send: () => this.#sendSync(),
    });
    this.#gaps = new EventSequenceGapDetector({
      timers: options.timers,
      reorderWindowMs: options.reorderWindowMs,
      onGap: () => {
        this.#counts.gapsDetected++;
        if (this.#turnActive) this.#sync.request();
      },
    });
  }

  /** What the rules did so far: acks written, frames each rule dropped, losses seen, gap syncs written. */
  get stats(): Readonly<CloudDeliveryStats> {
    return { ...this.#counts, syncsSent: this.#sync.sent };
  }

  /** Whether a turn is running. A new turn resets the sync back-off; the end of one cancels a pending sync. */
  setTurnActive(active: boolean): void {
    if (this.#turnActive === active) return;
    this.#turnActive = active;
    if (active) this.#sync.resetBackoff();
    else this.#sync.cancel();
  }

  /** A new connection: acks start over on its sockets, a new `event_seq` watermark, and holes may mean something again. */
  connected(sockets: LinkSockets<CloudChannel>): void {
    this.#sockets = sockets;
    this.#acks = { control: new SequenceAckTracker(), stream: new SequenceAckTracker() };
    this.#gaps.reset();
    this.#sync.resetBackoff();
  }

  accept(channel: CloudChannel, text: string): DecodedFrame | undefined {
    const decoded = decodeFrame(text);
    const { envelope } = decoded;
    const { ack } = this.#acks[channel].receive(envelope.seq);
    const socket = this.#sockets?.[channel];
    if (ack !== undefined && socket !== undefined && writeText(socket, ack)) this.#counts.acksSent++;
    const verdict = classifyInbound(channel, decoded.kind === "frame" ? decoded.frame.type : decoded.type, envelope, this.#keys);
    if (verdict === "control-stream-delta") {
      this.#counts.controlStreamDeltasDropped++;
      return undefined;
    }
    if (verdict === "duplicate") {
      this.#counts.duplicatesDropped++;
      return undefined;
    }
    this.#gaps.observe(envelope.event_seq);
    return decoded;
  }

  /** A sync the session writes itself (after a reconnect) counts as one: the pending one is cancelled, the interval restarts. */
  sending(frame: OutboundFrame): void {
    if (frame.type === "sync") this.#sync.markSent();
  }

  /** The connection dropped: forget the holes and cancel a pending sync (the session's post-reconnect sync supersedes it). */
  dropped(): void {
    this.#sockets = undefined;
    this.#gaps.reset();
    this.#sync.cancel();
  }

  /** The link closed for good: no sync from now on. */
  closed(): void {
    this.#sockets = undefined;
    this.#sync.stop();
    this.#gaps.reset();
  }

  #sendSync(): boolean {
    const { agentId, conversationId } = this.#options.runtime();
    if (!agentId || !conversationId) return false;
    return this.#options.send({
      type: "sync",
      runtime: { agent_id: agentId, conversation_id: conversationId },
      // Approvals are not what a hole loses (the runtime replays them on every new connection),
      // and recovering them makes the runtime ask its backend each time.
      recover_approvals: false,
      force_device_status: true,
    });
  }
}
