import { describe, expect, it } from "vitest";
import { SequenceAckTracker } from "../../packages/toolrelay/src/transport/sequence-ack-tracker.js";

describe("SequenceAckTracker", () => {
  it("acks every numeric seq, duplicates included, in arrival order", () => {
    const tracker = new SequenceAckTracker();
    const acks = [101, 102, 102, 7].map((seq) => tracker.receive(seq));
    expect(acks.map((decision) => decision.ack)).toEqual([
      '{"type":"ack","seq":101}',
      '{"type":"ack","seq":102}',
      '{"type":"ack","seq":102}',
      '{"type":"ack","seq":7}',
    ]);
    expect(acks.map((decision) => decision.redelivered)).toEqual([false, false, true, false]);
    expect(tracker.acked).toBe(4);
    expect(tracker.redelivered).toBe(1);
    expect(tracker.highest).toBe(102);
  });

  it("echoes the seq exactly as received (no assumptions about its form)", () => {
    const tracker = new SequenceAckTracker();
    expect(tracker.receive(0).ack).toBe('{"type":"ack","seq":0}');
    expect(tracker.receive(1.5).ack).toBe('{"type":"ack","seq":1.5}');
    expect(tracker.receive(-3).ack).toBe('{"type":"ack","seq":-3}');
  });

  it("gives no ack for a missing or non-numeric seq", () => {
    const tracker = new SequenceAckTracker();
    for (const seq of [undefined, null, "5", Number.NaN, Number.POSITIVE_INFINITY, {}]) {
      expect(tracker.receive(seq)).toEqual({ ack: undefined, redelivered: false });
    }
    expect(tracker.acked).toBe(0);
  });

  it("remembers a bounded window of seqs", () => {
    const tracker = new SequenceAckTracker({ window: 2 });
    tracker.receive(1);
    tracker.receive(2);
    tracker.receive(3); // evicts 1
    expect(tracker.receive(1).redelivered).toBe(false);
    expect(tracker.receive(3).redelivered).toBe(true);
  });
});
