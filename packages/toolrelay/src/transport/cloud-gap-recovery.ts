import type { Timers } from "../internal/timers.js";
import type { OutboundFrame } from "../wire/index.js";
import type { CloudRuntimeAddress } from "./cloud-link-options.js";
import { CloudSyncTrigger } from "./cloud-sync-trigger.js";
import { EventSequenceGapDetector } from "./sequence-gap-detector.js";

export interface CloudGapRecoveryOptions {
  timers: Timers;
  /** How long a missing `event_seq` may take to arrive on the other socket before it counts as lost, in ms. Default 1_000. */
  reorderWindowMs?: number;
  /** Gap syncs requested within this window are sent as one, in ms. Default 250. */
  debounceMs?: number;
  /** Least time between two gap syncs at first, in ms. Default 5_000. */
  minIntervalMs?: number;
  /** Gap syncs back off (doubling) while holes keep coming, up to this, in ms. Default 60_000. */
  maxIntervalMs?: number;
  /** The runtime to re-sync (read when a sync is due); no sync while it lacks an agent or a conversation. */
  runtime: () => Readonly<CloudRuntimeAddress>;
  /** Write the sync frame on the control socket; `false` when the link is not open (the frame is then dropped). */
  send: (frame: OutboundFrame) => boolean;
}

/**
 * What a cloud link does about lost events: `event_seq` goes to the gap
 * detector, and a loss seen **while a turn runs** asks for one debounced,
 * backed-off `sync` of the runtime (an idle session sends none: a hole is then
 * another runtime's traffic, or nothing a session waits for). A new socket
 * pair starts a new watermark and resets the back-off; a drop forgets the
 * holes and the pending sync (the session's post-reconnect sync supersedes it).
 */
export class CloudGapRecovery {
  #options: CloudGapRecoveryOptions;
  #gaps: EventSequenceGapDetector;
  #sync: CloudSyncTrigger;
  /** A turn is running (the session says so): only then are `event_seq` holes worth a sync. */
  #turnActive = false;
  #gapsDetected = 0;

  constructor(options: CloudGapRecoveryOptions) {
    this.#options = options;
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
        this.#gapsDetected++;
        if (this.#turnActive) this.#sync.request();
      },
    });
  }

  /** Losses the gap detector reported, turn or not. */
  get gapsDetected(): number {
    return this.#gapsDetected;
  }

  /** Gap syncs written. */
  get syncsSent(): number {
    return this.#sync.sent;
  }

  /** One kept frame's `event_seq` (any value; non-numbers are ignored). */
  observe(eventSeq: unknown): void {
    this.#gaps.observe(eventSeq);
  }

  /** Whether a turn is running. A new turn resets the sync back-off; the end of one cancels a pending sync. */
  setTurnActive(active: boolean): void {
    if (this.#turnActive === active) return;
    this.#turnActive = active;
    if (active) this.#sync.resetBackoff();
    else this.#sync.cancel();
  }

  /** A sync went out by another path (the session's own): cancel the pending one and restart the interval. */
  markSent(): void {
    this.#sync.markSent();
  }

  /** A new socket pair is attached: a new watermark, and holes may mean something again. */
  connected(): void {
    this.#gaps.reset();
    this.#sync.resetBackoff();
  }

  /** The socket pair dropped: forget the holes and cancel a pending sync (the session's post-reconnect sync supersedes it). */
  dropped(): void {
    this.#gaps.reset();
    this.#sync.cancel();
  }

  /** The link closed for good: no sync from now on. */
  stop(): void {
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
