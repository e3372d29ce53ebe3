/**
 * Relay delivery acknowledgements for ONE status socket.
 *
 * The cloud relay stamps a delivery `seq` on frames it forwards; the client
 * acknowledges every one with `{"type":"ack","seq":n}` on the **same socket**
 * the frame arrived on — also for a frame that is then dropped as a duplicate
 * (docs/protocol.md#cloud-delivery-rules). Whether `seq` is per socket and whether acks are
 * cumulative is not documented (docs/protocol.md#unknowns), so nothing is inferred from the
 * numbers: every numeric `seq` is acked, individually, in arrival order.
 *
 * A tracker lives as long as its socket; a reconnect gets new trackers.
 */
export interface SequenceAckTrackerOptions {
  /** How many recent `seq` values are remembered to count redeliveries. Default 1_024. */
  window?: number | undefined;
}

export interface AckDecision {
  /** The ack frame to write on the socket the frame came from, or `undefined` when the frame has no numeric `seq`. */
  ack: string | undefined;
  /** `true` when this `seq` was already acked on this socket (a relay redelivery). */
  redelivered: boolean;
}

const noAck: AckDecision = { ack: undefined, redelivered: false };

export class SequenceAckTracker {
  #window: number;
  #recent = new Set<number>();
  #acked = 0;
  #redelivered = 0;
  #highest: number | undefined;

  constructor(options: SequenceAckTrackerOptions = {}) {
    this.#window = Math.max(1, options.window ?? 1_024);
  }

  /** Number of acks produced so far. */
  get acked(): number {
    return this.#acked;
  }

  /** Number of frames whose `seq` had been acked before on this socket. */
  get redelivered(): number {
    return this.#redelivered;
  }

  /** Highest `seq` seen on this socket, if any. */
  get highest(): number | undefined {
    return this.#highest;
  }

  /** Decide the ack for one inbound frame's `seq` (any value; non-numbers get no ack). */
  receive(seq: unknown): AckDecision {
    if (typeof seq !== "number" || !Number.isFinite(seq)) return noAck;
    const redelivered = this.#recent.has(seq);
    if (redelivered) {
      this.#redelivered++;
    } else {
      this.#recent.add(seq);
      if (this.#recent.size > this.#window) {
        const oldest = this.#recent.values().next();
        if (!oldest.done) this.#recent.delete(oldest.value);
      }
    }
    if (this.#highest === undefined || seq > this.#highest) this.#highest = seq;
    this.#acked++;
    return { ack: JSON.stringify({ type: "ack", seq }), redelivered };
  }
}
