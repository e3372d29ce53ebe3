/**
 * One frame as the relay handles it: the bytes it arrived as (forwarded untouched) and the few
 * facts routing needs — `type`, `request_id`, the runtime — read from the top-level fields the
 * scanner found. Other fields are parsed only when asked for ({@link RelayFrame.field}).
 * Towards an SDK a frame is sent with a delivery `seq` appended as its last key
 * ({@link stampSeq}), without copying a large frame.
 */
import { scanFrame, type FieldSpan, type ScanResult } from "./frame-scanner.js";

const BACKSLASH = 0x5c;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** The key the relay uses for one runtime. A missing conversation counts as `"default"`. */
export function runtimeKeyOf(agentId: string, conversationId: string | undefined): string {
  return `agent:${agentId}::conversation:${conversationId ?? "default"}`;
}

export class RelayFrame {
  readonly data: Buffer;
  readonly type: string;
  /** `request_id` when it is a non-empty string. */
  readonly requestId: string | undefined;
  /**
   * `agent:<id>::conversation:<id>` from `runtime`, else top-level `agent_id`/`conversation_id`.
   * A `runtime_start` without `conversation_id` creates a conversation: its runtime is unknown
   * until the response names it.
   */
  readonly runtimeKey: string | undefined;
  /** Offset of the closing brace. */
  readonly closeAt: number;
  #fields: Map<string, FieldSpan>;

  // biome-ignore lint/style/useConsistentMemberAccessibility: a constructor cannot be #private; RelayFrame.read and RelayFrame.from are the way in
  private constructor(data: Buffer, fields: Map<string, FieldSpan>, closeAt: number, type: string) {
    this.data = data;
    this.#fields = fields;
    this.closeAt = closeAt;
    this.type = type;
    this.requestId = nonEmptyString(this.field("request_id"));
    this.runtimeKey = this.#runtimeKey();
  }

  /** A frame from a finished scan; `undefined` for anything that is not an object with a string `type`. */
  static from(data: Buffer, scan: ScanResult): RelayFrame | undefined {
    if (!scan.ok) return undefined;
    const span = scan.fields.get("type");
    if (span?.kind !== "string") return undefined;
    const type = nonEmptyString(parseSpan(data, span));
    return type === undefined ? undefined : new RelayFrame(data, scan.fields, scan.closeAt, type);
  }

  /** Scans and reads `data` in one go (tests, and frames the relay builds itself). */
  static read(data: Buffer | string): RelayFrame | undefined {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    return RelayFrame.from(bytes, scanFrame(bytes));
  }

  /** Bytes of the frame. */
  get size(): number {
    return this.data.length;
  }

  /**
   * This frame, safe to keep: a small frame that shares a larger buffer (a socket read holding
   * several messages) is copied, so keeping it does not keep the whole buffer alive.
   */
  retain(): RelayFrame {
    if (this.data.length > FRAGMENT_THRESHOLD || this.data.buffer.byteLength === this.data.length) return this;
    return new RelayFrame(Buffer.from(this.data), this.#fields, this.closeAt, this.type);
  }

  /** A top-level field, parsed on demand; `undefined` when absent or not valid JSON. */
  field(name: string): unknown {
    const span = this.#fields.get(name);
    return span === undefined ? undefined : parseSpan(this.data, span);
  }

  has(name: string): boolean {
    return this.#fields.has(name);
  }

  #runtimeKey(): string | undefined {
    if (this.type === "runtime_start") {
      const agentId = nonEmptyString(this.field("agent_id"));
      const conversationId = nonEmptyString(this.field("conversation_id"));
      return agentId && conversationId ? runtimeKeyOf(agentId, conversationId) : undefined;
    }
    if (this.#fields.get("runtime")?.kind === "container") {
      const runtime = this.field("runtime");
      if (isRecord(runtime)) {
        const agentId = nonEmptyString(runtime.agent_id);
        if (agentId) return runtimeKeyOf(agentId, nonEmptyString(runtime.conversation_id));
      }
    }
    const agentId = nonEmptyString(this.field("agent_id"));
    if (agentId) return runtimeKeyOf(agentId, nonEmptyString(this.field("conversation_id")));
    return undefined;
  }
}

function parseSpan(data: Buffer, span: FieldSpan): unknown {
  if (span.kind === "string" && data.subarray(span.start, span.end).indexOf(BACKSLASH) < 0) {
    return data.toString("utf8", span.start + 1, span.end - 1);
  }
  try {
    return JSON.parse(data.toString("utf8", span.start, span.end));
  } catch {
    return undefined;
  }
}

/** A frame with its delivery `seq`: `head` (the frame up to its closing brace) + `tail` (`,"seq":N}`). */
export interface StampedFrame {
  readonly seq: number;
  readonly head: Buffer;
  readonly tail: Buffer;
  /** head + tail. */
  readonly bytes: number;
}

/** Frames above this size are sent as two WebSocket fragments instead of being copied. */
export const FRAGMENT_THRESHOLD = 64 * 1024;

/**
 * `frame` with `"seq":<seq>` appended as its last key (so it wins over any `seq` the frame
 * already had). A small frame is copied into one buffer (so it does not pin the socket's read
 * buffer); a large one keeps referring to the bytes it arrived in.
 */
export function stampSeq(frame: RelayFrame, seq: number): StampedFrame {
  let end = frame.closeAt;
  while (end > 0 && isWhitespace(frame.data[end - 1]!)) end--;
  const empty = frame.data[end - 1] === 0x7b;
  const tail = Buffer.from(`${empty ? "" : ","}"seq":${seq}}`, "latin1");
  if (end <= FRAGMENT_THRESHOLD) {
    const whole = Buffer.concat([frame.data.subarray(0, end), tail]);
    return { seq, head: whole, tail: Buffer.alloc(0), bytes: whole.length };
  }
  const head = frame.data.subarray(0, end);
  return { seq, head, tail, bytes: head.length + tail.length };
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}
