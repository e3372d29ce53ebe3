import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FrameReader, frameBytes, type FrameReading } from "../../packages/toolrelay/src/sidecar/frame-reader.js";

const text = (reading: FrameReading): string =>
  reading.kind === "frame" ? Buffer.from(reading.body).toString() : `too-large:${reading.bytes}`;

describe("FrameReader", () => {
  it("reads frames whatever the chunking: one byte at a time, glued together, split anywhere", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 40 }), { maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1 }),
        (bodies, cuts) => {
          const stream = Buffer.concat(bodies.map((body) => frameBytes(Buffer.from(body))));
          const reader = new FrameReader(1_000);
          const read: string[] = [];
          let at = 0;
          for (let index = 0; at < stream.length; index++) {
            const size = cuts[index % cuts.length]!;
            for (const reading of reader.push(stream.subarray(at, at + size))) read.push(text(reading));
            at += size;
          }
          expect(read).toEqual(bodies);
          expect(reader.midFrame).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("reports an oversized frame at its header, skips its body as it streams past, and reads the next frame", () => {
    const reader = new FrameReader(8);
    const big = frameBytes(Buffer.alloc(20, 0x61));
    const next = frameBytes(Buffer.from("ok"));
    const stream = Buffer.concat([big, next]);
    const first = reader.push(stream.subarray(0, 6));
    expect(first).toEqual([{ kind: "too-large", bytes: 20 }]);
    expect(reader.midFrame).toBe(true);
    expect(reader.push(stream.subarray(6, 23)).map(text)).toEqual([]);
    expect(reader.push(stream.subarray(23)).map(text)).toEqual(["ok"]);
    expect(reader.midFrame).toBe(false);
  });

  it("takes a zero-length frame as an empty body, and says when the stream stops inside a frame", () => {
    const reader = new FrameReader(8);
    expect(reader.push(Uint8Array.of(0, 0, 0, 0))).toEqual([{ kind: "frame", body: new Uint8Array() }]);
    reader.push(Uint8Array.of(0, 0));
    expect(reader.midFrame).toBe(true);
    reader.push(Uint8Array.of(0, 3, 0x61));
    expect(reader.midFrame).toBe(true);
  });

  it("copies what it keeps: a reused chunk buffer changes no frame", () => {
    const reader = new FrameReader(8);
    const chunk = Buffer.from(frameBytes(Buffer.from("abcd")));
    const [header, body] = [chunk.subarray(0, 6), Buffer.from(chunk.subarray(6))];
    reader.push(header);
    header.fill(0x7a);
    expect(reader.push(body).map(text)).toEqual(["abcd"]);
  });

  it("refuses a limit outside 1–2^32-1", () => {
    for (const bad of [0, -1, 1.5, 2 ** 32, Number.NaN]) expect(() => new FrameReader(bad)).toThrow(RangeError);
  });
});
