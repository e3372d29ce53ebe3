/**
 * `FrameReader`: cuts a byte stream into sidecar frames — each a 4-byte
 * big-endian length, then that many bytes of body. Pure (no streams, no
 * timers): `push` takes whatever chunk the pipe delivered and returns the
 * frames it completed, in order.
 *
 * A frame whose declared length is over `maxFrameBytes` is never buffered: it
 * is reported at once (`too-large`, with the declared length) and its body is
 * skipped as it streams past, so the next frame is read as usual. A zero
 * length is a frame with an empty body (the codec reports it as malformed).
 */

/** One thing the reader found in the stream. */
export type FrameReading =
  /** A complete frame body (not yet decoded). */
  | { kind: "frame"; body: Uint8Array }
  /** A frame declared `bytes` long, over the limit: its body is skipped. */
  | { kind: "too-large"; bytes: number };

/** Bytes of the length prefix. */
export const FRAME_HEADER_BYTES = 4;

/** Largest frame body the 4-byte prefix can declare. */
export const MAX_DECLARABLE_FRAME_BYTES = 0xffff_ffff;

export class FrameReader {
  readonly maxFrameBytes: number;
  #header = new Uint8Array(FRAME_HEADER_BYTES);
  #headerFilled = 0;
  /** Declared length of the frame being read, or -1 while reading a header. */
  #expected = -1;
  #parts: Uint8Array[] = [];
  #received = 0;
  /** Bytes of an oversized frame still to skip. */
  #skipping = 0;

  constructor(maxFrameBytes: number) {
    if (!Number.isInteger(maxFrameBytes) || maxFrameBytes < 1 || maxFrameBytes > MAX_DECLARABLE_FRAME_BYTES) {
      throw new RangeError(`maxFrameBytes must be an integer in 1–${MAX_DECLARABLE_FRAME_BYTES}, got ${String(maxFrameBytes)}`);
    }
    this.maxFrameBytes = maxFrameBytes;
  }

  /** `true` when the stream stopped inside a frame (a truncated last frame). */
  get midFrame(): boolean {
    return this.#headerFilled > 0 || this.#expected >= 0 || this.#skipping > 0;
  }

  /** Feed one chunk; returns every frame it completed (and every oversized one it began). */
  push(chunk: Uint8Array): FrameReading[] {
    const readings: FrameReading[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      if (this.#skipping > 0) {
        const skipped = Math.min(this.#skipping, chunk.length - offset);
        this.#skipping -= skipped;
        offset += skipped;
        continue;
      }
      if (this.#expected < 0) {
        const taken = Math.min(FRAME_HEADER_BYTES - this.#headerFilled, chunk.length - offset);
        this.#header.set(chunk.subarray(offset, offset + taken), this.#headerFilled);
        this.#headerFilled += taken;
        offset += taken;
        if (this.#headerFilled < FRAME_HEADER_BYTES) break;
        this.#headerFilled = 0;
        const declared = new DataView(this.#header.buffer).getUint32(0, false);
        if (declared > this.maxFrameBytes) {
          readings.push({ kind: "too-large", bytes: declared });
          this.#skipping = declared;
          continue;
        }
        this.#expected = declared;
        if (declared === 0) {
          readings.push(this.#complete());
        }
        continue;
      }
      const taken = Math.min(this.#expected - this.#received, chunk.length - offset);
      // A copy (Buffer#slice would be a view): the caller may reuse its chunk buffer.
      this.#parts.push(Uint8Array.prototype.slice.call(chunk, offset, offset + taken));
      this.#received += taken;
      offset += taken;
      if (this.#received === this.#expected) readings.push(this.#complete());
    }
    return readings;
  }

  #complete(): FrameReading {
    const parts = this.#parts;
    let body: Uint8Array;
    if (parts.length === 1) body = parts[0]!;
    else {
      body = new Uint8Array(this.#expected);
      let at = 0;
      for (const part of parts) {
        body.set(part, at);
        at += part.length;
      }
    }
    this.#parts = [];
    this.#received = 0;
    this.#expected = -1;
    return { kind: "frame", body };
  }
}

/** The 4-byte big-endian prefix and `body`, as one buffer (one write, never interleaved). */
export function frameBytes(body: Uint8Array): Uint8Array {
  if (body.length > MAX_DECLARABLE_FRAME_BYTES) throw new RangeError(`a frame body of ${body.length} bytes cannot be declared in 4 bytes`);
  const bytes = new Uint8Array(FRAME_HEADER_BYTES + body.length);
  new DataView(bytes.buffer).setUint32(0, body.length, false);
  bytes.set(body, FRAME_HEADER_BYTES);
  return bytes;
}
