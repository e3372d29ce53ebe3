import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fc, test } from "@fast-check/vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { EventSequenceGapDetector, type EventSequenceGap } from "../../packages/toolrelay/src/transport/sequence-gap-detector.js";

function detector(reorderWindowMs = 1_000, maxHoles?: number) {
  const gaps: EventSequenceGap[] = [];
  const instance = new EventSequenceGapDetector({ timers: systemTimers, reorderWindowMs, maxHoles, onGap: (gap) => gaps.push(gap) });
  return { instance, gaps };
}

describe("EventSequenceGapDetector", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
  });

  it("takes the first number as the watermark and ignores older ones", () => {
    const { instance, gaps } = detector();
    instance.observe(40);
    instance.observe(12);
    instance.observe(40);
    instance.observe(41);
    vi.advanceTimersByTime(10_000);
    expect(gaps).toEqual([]);
    expect(instance.highest).toBe(41);
  });

  it("does not report interleaving of the two channels when the hole fills inside the window", () => {
    const { instance, gaps } = detector();
    instance.observe(1); // control
    instance.observe(3); // stream overtakes
    instance.observe(5);
    expect(instance.missing).toBe(2);
    vi.advanceTimersByTime(999);
    instance.observe(2);
    instance.observe(4); // control catches up
    expect(instance.missing).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(gaps).toEqual([]);
  });

  it("reports a hole still open after the window exactly once, at the deadline", () => {
    const { instance, gaps } = detector();
    instance.observe(1);
    instance.observe(4); // 2 and 3 missing
    vi.advanceTimersByTime(999);
    expect(gaps).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(gaps).toEqual([{ missing: 2, from: 2, to: 3 }]);
    vi.advanceTimersByTime(10_000);
    expect(gaps).toHaveLength(1);
    instance.observe(2); // a straggler after the verdict changes nothing
    vi.advanceTimersByTime(10_000);
    expect(gaps).toHaveLength(1);
  });

  it("reports a partly filled hole with only the numbers still missing", () => {
    const { instance, gaps } = detector();
    instance.observe(10);
    instance.observe(15); // 11..14 missing
    instance.observe(12);
    instance.observe(13);
    vi.advanceTimersByTime(1_000);
    expect(gaps).toEqual([{ missing: 2, from: 11, to: 14 }]);
  });

  it("gives every hole its own window", () => {
    const { instance, gaps } = detector();
    instance.observe(1);
    instance.observe(3); // hole {2} at t=0
    vi.advanceTimersByTime(600);
    instance.observe(5); // hole {4} at t=600
    vi.advanceTimersByTime(400); // t=1000: {2} expires, {4} still in its window
    expect(gaps).toEqual([{ missing: 1, from: 2, to: 2 }]);
    instance.observe(4);
    vi.advanceTimersByTime(5_000);
    expect(gaps).toHaveLength(1);
  });

  it("re-arms for the younger hole when the older one fills", () => {
    const { instance, gaps } = detector();
    instance.observe(1);
    instance.observe(3); // {2} at t=0
    vi.advanceTimersByTime(500);
    instance.observe(5); // {4} at t=500
    instance.observe(2); // older hole filled: the deadline moves from 1000 to 1500
    vi.advanceTimersByTime(999);
    expect(gaps).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(gaps).toEqual([{ missing: 1, from: 4, to: 4 }]);
  });

  it("counts too many open holes as a loss at once", () => {
    const { instance, gaps } = detector(1_000, 2);
    instance.observe(1);
    instance.observe(3);
    instance.observe(5);
    expect(gaps).toEqual([]);
    instance.observe(7);
    expect(gaps).toEqual([{ missing: 3, from: 2, to: 6 }]);
    expect(instance.missing).toBe(0);
  });

  it("ignores values that are not positive safe integers", () => {
    const { instance, gaps } = detector();
    for (const value of [undefined, "3", 0, -1, 1.5, Number.NaN, 2 ** 60]) instance.observe(value);
    expect(instance.highest).toBeUndefined();
    instance.observe(1);
    vi.advanceTimersByTime(5_000);
    expect(gaps).toEqual([]);
  });

  it("reset forgets the watermark and cancels the timer", () => {
    const { instance, gaps } = detector();
    instance.observe(1);
    instance.observe(9);
    instance.reset();
    expect(vi.getTimerCount()).toBe(0);
    instance.observe(50); // new connection: new watermark, no hole
    vi.advanceTimersByTime(5_000);
    expect(gaps).toEqual([]);
  });
});

describe("EventSequenceGapDetector (property)", () => {
  // Any interleaving of two in-order channels, delivered within the window, is never a gap;
  // removing one number between the first delivered and the highest always is, exactly once.
  test.prop([
    fc.array(fc.boolean(), { minLength: 2, maxLength: 60 }),
    fc.array(fc.boolean(), { minLength: 120, maxLength: 120 }),
    fc.nat(),
  ])("interleaving of two ordered channels never reports; a loss above the watermark always does", (channelOf, picks, dropSeed) => {
    vi.useFakeTimers();
    try {
      const numbers = channelOf.map((_, index) => index + 1);
      const control = numbers.filter((_, index) => channelOf[index]);
      const stream = numbers.filter((_, index) => !channelOf[index]);
      const merged: number[] = [];
      let c = 0;
      let s = 0;
      let step = 0;
      while (c < control.length || s < stream.length) {
        const takeControl = s >= stream.length || (c < control.length && picks[step++ % picks.length]!);
        merged.push(takeControl ? control[c++]! : stream[s++]!);
      }
      const clean = detector(1_000);
      for (const value of merged) clean.instance.observe(value);
      vi.advanceTimersByTime(5_000);
      expect(clean.gaps).toEqual([]);

      const lost = numbers[dropSeed % numbers.length]!;
      const lossy = detector(1_000);
      const delivered = merged.filter((value) => value !== lost);
      // The first number after a connect is the watermark: a loss below it is covered by the connect's own sync.
      const first = delivered[0]!;
      for (const value of merged) if (value !== lost) lossy.instance.observe(value);
      vi.advanceTimersByTime(5_000);
      const highest = Math.max(...delivered);
      if (lost > first && lost < highest) expect(lossy.gaps.map((gap) => gap.missing)).toEqual([1]);
      else expect(lossy.gaps).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
});
