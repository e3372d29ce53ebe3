/**
 * `HostFrameIntake`: the way in from the host, up to a checked frame. The
 * bytes are cut into frames, each body is decoded, its `type` looked up and
 * the frame checked against that type's schema; a frame that fails on the way
 * is answered with an `error` frame (`frame_too_large`, `malformed_frame`,
 * `unknown_frame_type`, `hello_required`, `invalid_frame`) and skipped, and the
 * next one is read as usual. What passes goes to `onFrame`, in the order it
 * arrived.
 *
 * Before the host's `hello` is answered, a frame of any known type but `hello`
 * and `shutdown` gets `hello_required` whatever its fields: it would be refused
 * even with good ones, and the host's first fix is the order.
 */
import { formatIssues } from "../wire/format-issues.js";
import type { Diagnostics } from "./diagnostics.js";
import type { BodyCodec } from "./frame-encoding.js";
import type { FrameReader, FrameReading } from "./frame-reader.js";
import { idsOf } from "./frame-writer.js";
import type { HostApprovals } from "./host-approvals.js";
import type { HostCalls } from "./host-calls.js";
import { hostFrameSchemas, type HostFrame, type HostFrameType } from "./host-frames.js";
import { SIDECAR_PROTOCOL_VERSIONS } from "./protocol-values.js";
import { errorFrame, type ErrorFrameAbout, type SidecarFrame } from "./sidecar-frames.js";

/** The ids a frame carries (for the error frames about it). */
export type HostFrameIds = ReturnType<typeof idsOf>;

/** The frames that work before `hello` (every other known type gets `hello_required` then). */
const BEFORE_HELLO: ReadonlySet<string> = new Set<HostFrameType>(["hello", "shutdown"]);

export interface HostFrameIntakeOptions {
  /** Cuts the input into frame bodies; its `maxFrameBytes` is the limit. */
  reader: FrameReader;
  /** Decodes a frame body. */
  codec: BodyCodec;
  diagnostics: Diagnostics;
  /** The calls waiting for the host: an invalid answer to one still settles it. */
  hostCalls: HostCalls;
  /** The approvals waiting for the host: an invalid answer to one denies it. */
  hostApprovals: HostApprovals;
  /** Write a frame to the host (here: the error frames). */
  send: (frame: SidecarFrame) => void;
  /** Whether the host's `hello` was answered (`welcome`). */
  greeted: () => boolean;
  /** A frame that passed its schema, with its ids. */
  onFrame: (frame: HostFrame, ids: HostFrameIds) => void;
}

export class HostFrameIntake {
  #options: HostFrameIntakeOptions;

  constructor(options: HostFrameIntakeOptions) {
    this.#options = options;
  }

  /** `true` when the input stopped inside a frame (a truncated last frame). */
  get midFrame(): boolean {
    return this.#options.reader.midFrame;
  }

  /** Take one chunk of the input: every frame it completes is checked and handed on, in order. */
  push(chunk: Buffer): void {
    const { reader, diagnostics } = this.#options;
    let readings: FrameReading[];
    try {
      readings = reader.push(chunk);
    } catch {
      return;
    }
    for (const reading of readings) {
      if (reading.kind === "too-large") {
        diagnostics.log("frame-too-large", { bytes: reading.bytes, limit: reader.maxFrameBytes });
        this.#error(
          "frame_too_large",
          `a frame of ${reading.bytes} bytes is over the limit of ${reader.maxFrameBytes} bytes; it was skipped`,
        );
        continue;
      }
      this.#onBody(reading.body);
    }
  }

  #onBody(body: Uint8Array): void {
    const { codec, diagnostics } = this.#options;
    const decoded = codec.decode(body);
    if (!decoded.ok) {
      diagnostics.log("malformed-frame", { bytes: body.length });
      this.#error("malformed_frame", `the frame could not be decoded as ${codec.encoding}: ${decoded.error}`);
      return;
    }
    const raw = decoded.value;
    const type = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as { type?: unknown }).type : undefined;
    if (typeof type !== "string") {
      diagnostics.log("malformed-frame", { bytes: body.length });
      this.#error("malformed_frame", 'a frame must be an object with a string "type"');
      return;
    }
    const ids = idsOf(raw as object);
    if (diagnostics.enabled) diagnostics.log("<-", { type, ...ids, bytes: body.length });
    if (!Object.hasOwn(hostFrameSchemas, type)) {
      this.#error(
        "unknown_frame_type",
        `unknown frame type ${JSON.stringify(type.slice(0, 64))}; this sidecar speaks protocol versions ${SIDECAR_PROTOCOL_VERSIONS.join(", ")}`,
        { frame_type: null, ...ids },
      );
      return;
    }
    if (!BEFORE_HELLO.has(type) && !this.#options.greeted()) {
      this.#error("hello_required", "the first frame must be hello", { frame_type: type, ...ids });
      return;
    }
    const schema = hostFrameSchemas[type as HostFrameType];
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      this.#invalid(type, ids, formatIssues(parsed.error.issues));
      return;
    }
    this.#options.onFrame(parsed.data as HostFrame, ids);
  }

  /**
   * A known frame with a bad shape. A tool answer of a waiting call also settles the call (as a tool
   * error), so nothing hangs; an approval answer of a waiting approval denies it (an approval the
   * host could not state is not one).
   */
  #invalid(type: string, ids: HostFrameIds, issues: string): void {
    this.#error("invalid_frame", `invalid ${type} frame: ${issues}`, { frame_type: type, ...ids });
    if ((type === "tool_result" || type === "tool_error") && ids.session !== undefined && ids.call !== undefined) {
      this.#options.hostCalls.answer(ids.session, ids.call, { kind: "error", message: `the host sent an invalid ${type} (${issues})` });
    }
    if (type === "approval_response" && ids.session !== undefined && ids.approval !== undefined) {
      this.#options.hostApprovals.answer(ids.session, ids.approval, { allow: false, message: "the host's approval answer was invalid" });
    }
  }

  #error(code: string, message: string, about?: ErrorFrameAbout): void {
    this.#options.send(errorFrame(code, message, about));
  }
}
