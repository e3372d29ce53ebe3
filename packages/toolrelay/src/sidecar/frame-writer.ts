/**
 * `FrameWriter`: the one way out to the host. Each frame is encoded, prefixed
 * and handed to the output as a single buffer, in the order `write` was
 * called, so frames never interleave. A frame over `maxFrameBytes` is not
 * sent: an `error` frame (`frame_too_large`) naming its type and ids goes in
 * its place. A failing output (the host closed its end: EPIPE) marks the
 * host gone; later writes are dropped.
 */
import type { Writable } from "node:stream";
import type { Diagnostics } from "./diagnostics.js";
import type { BodyCodec } from "./frame-encoding.js";
import { frameBytes } from "./frame-reader.js";
import type { SidecarFrame } from "./sidecar-frames.js";

export class FrameWriter {
  #output: Writable;
  #codec: BodyCodec;
  #maxFrameBytes: number;
  #diagnostics: Diagnostics;
  #onGone: () => void;
  #gone = false;

  constructor(options: { output: Writable; codec: BodyCodec; maxFrameBytes: number; diagnostics: Diagnostics; onGone: () => void }) {
    this.#output = options.output;
    this.#codec = options.codec;
    this.#maxFrameBytes = options.maxFrameBytes;
    this.#diagnostics = options.diagnostics;
    this.#onGone = options.onGone;
    this.#output.on("error", (error: NodeJS.ErrnoException) => this.#lost(error.code ?? "error"));
  }

  /** `true` once the output failed or was ended. */
  get gone(): boolean {
    return this.#gone;
  }

  write(frame: SidecarFrame): void {
    if (this.#gone) return;
    let body: Uint8Array;
    try {
      body = this.#codec.encode(frame);
    } catch (error) {
      // Frames are built from JSON values, so this is a bug; the host still learns of it.
      this.#diagnostics.log("frame-unencodable", { type: frame.type });
      const reason = error instanceof Error ? error.message : String(error);
      body = this.#codec.encode({
        type: "error",
        code: "internal",
        message: `a ${frame.type} frame could not be encoded: ${reason}`,
        frame_type: frame.type,
        ...nullIds(frame),
      } satisfies SidecarFrame);
    }
    if (body.length > this.#maxFrameBytes) {
      this.#diagnostics.log("frame-too-large-out", { type: frame.type, bytes: body.length, limit: this.#maxFrameBytes });
      body = this.#codec.encode({
        type: "error",
        code: "frame_too_large",
        message: `a ${frame.type} frame of ${body.length} bytes is over the limit of ${this.#maxFrameBytes} bytes and was not sent`,
        frame_type: frame.type,
        ...nullIds(frame),
      } satisfies SidecarFrame);
    }
    if (this.#diagnostics.enabled) this.#diagnostics.log("->", { type: frame.type, ...idsOf(frame), bytes: body.length });
    try {
      this.#output.write(frameBytes(body));
    } catch (error) {
      this.#lost((error as NodeJS.ErrnoException).code ?? "error");
    }
  }

  /** Flush what was written and end the output. Resolves when it is flushed (or failed). */
  end(): Promise<void> {
    if (this.#gone) return Promise.resolve();
    this.#gone = true;
    return new Promise<void>((resolve) => {
      const output = this.#output;
      const done = (): void => {
        output.off("error", done);
        resolve();
      };
      output.once("error", done);
      output.end(done);
    });
  }

  #lost(reason: string): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#diagnostics.log("host-output-lost", { reason });
    this.#onGone();
  }
}

/** The frame's ids for an error frame about it (`null` where it has none). */
function nullIds(frame: object): { session: string | null; turn: string | null; call: string | null } {
  const ids = idsOf(frame);
  return { session: ids.session ?? null, turn: ids.turn ?? null, call: ids.call ?? null };
}

/** The ids a frame may carry. */
export interface FrameIds {
  session?: string | undefined;
  turn?: string | undefined;
  call?: string | undefined;
  approval?: string | undefined;
}

/** The ids of a frame, for diagnostics and the error frames about it (never its payload). */
export function idsOf(frame: object): FrameIds {
  const ids: FrameIds = {};
  const fields = frame as Record<string, unknown>;
  for (const key of ["session", "turn", "call", "approval"] as const) if (typeof fields[key] === "string") ids[key] = fields[key];
  return ids;
}
