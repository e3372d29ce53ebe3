/**
 * `decodeFrame`: one WebSocket text message → a result, never an exception.
 * Safe to call inside a socket callback with any string at all: bad JSON,
 * a 10,000-level nested document (rejected by a depth scan before
 * `JSON.parse`), `__proto__` keys (kept as plain own properties), unknown
 * frame types (reported, not rejected).
 */
import { DEFAULT_MAX_JSON_DEPTH, parseJson } from "../internal/safe-json.js";
import { formatIssues } from "./format-issues.js";
import { inboundFrameSchemasByType, type InboundFrame } from "./inbound-frame.js";
import { isPlainExternalToolCallRequest } from "./tool-call-frames.js";
import { outboundFrameSchemasByType, type OutboundFrame } from "./outbound-frame.js";
import type { z } from "zod/v4";

/**
 * Relay and listener delivery fields, read from every frame that is a JSON
 * object (known type or not): `seq` (cloud relay delivery number, to ACK),
 * `event_seq` (listener event counter, for gap detection) and
 * `idempotency_key` (collapses relay duplicates). A field of the wrong type
 * is left out.
 */
export interface FrameEnvelope {
  seq?: number | undefined;
  event_seq?: number | undefined;
  idempotency_key?: string | undefined;
}

/** The result of decoding one message. */
export type DecodedFrame<TFrame = InboundFrame> =
  /** A known, valid frame. */
  | { kind: "frame"; frame: TFrame; envelope: FrameEnvelope }
  /** A JSON object with a string `type` this SDK does not model: ignore it. */
  | { kind: "unknown"; type: string; envelope: FrameEnvelope }
  /**
   * Not JSON, not an object, no string `type`, or a known type with a bad shape. `requestId` is the
   * frame's top-level string `request_id` when it has one (so a request can still be refused).
   */
  | { kind: "invalid"; error: string; type?: string | undefined; requestId?: string | undefined; envelope: FrameEnvelope };

export interface DecodeFrameOptions {
  /** Deepest JSON nesting accepted. Default 256 (`DEFAULT_MAX_JSON_DEPTH`). */
  maxDepth?: number | undefined;
}

/** Decode one runtime→client message. Never throws. */
export function decodeFrame(text: string, options: DecodeFrameOptions = {}): DecodedFrame {
  // The hot frame is accepted without zod when it is plainly well formed (else zod decides).
  return decodeWith<InboundFrame>(text, inboundFrameSchemasByType, options, isPlainExternalToolCallRequest);
}

/**
 * Decode one client→runtime message against the strict outbound schemas (for
 * scripted runtimes and relays that read what an SDK sends). Never throws.
 */
export function decodeOutboundFrame(text: string, options: DecodeFrameOptions = {}): DecodedFrame<OutboundFrame> {
  return decodeWith<OutboundFrame>(text, outboundFrameSchemasByType, options);
}

/** Read the delivery fields of a parsed JSON object. */
export function extractEnvelope(value: Record<string, unknown>): FrameEnvelope {
  const envelope: FrameEnvelope = {};
  const { seq, event_seq: eventSeq, idempotency_key: idempotencyKey } = value;
  if (typeof seq === "number" && Number.isFinite(seq)) envelope.seq = seq;
  if (typeof eventSeq === "number" && Number.isFinite(eventSeq)) envelope.event_seq = eventSeq;
  if (typeof idempotencyKey === "string") envelope.idempotency_key = idempotencyKey;
  return envelope;
}

function decodeWith<TFrame>(
  text: string,
  schemas: ReadonlyMap<string, z.ZodType>,
  options: DecodeFrameOptions,
  quickAccept?: (record: Record<string, unknown>) => boolean,
): DecodedFrame<TFrame> {
  try {
    if (typeof text !== "string") return { kind: "invalid", error: "frame is not text", envelope: {} };
    const parsed = parseJson(text, options.maxDepth ?? DEFAULT_MAX_JSON_DEPTH);
    if (!parsed.ok) return { kind: "invalid", error: describeJsonError(parsed.error), ...topLevelIds(text), envelope: {} };
    const value = parsed.value;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { kind: "invalid", error: "frame is not a JSON object", envelope: {} };
    }
    const record = value as Record<string, unknown>;
    const envelope = extractEnvelope(record);
    const type = record.type;
    if (typeof type !== "string") return { kind: "invalid", error: 'frame has no string "type"', envelope };
    if (quickAccept?.(record) === true) return { kind: "frame", frame: record as TFrame, envelope };
    const schema = schemas.get(type);
    if (schema === undefined) return { kind: "unknown", type, envelope };
    const result = schema.safeParse(record);
    if (!result.success) {
      const requestId = typeof record.request_id === "string" ? record.request_id : undefined;
      return {
        kind: "invalid",
        error: `${type}: ${formatIssues(result.error.issues)}`,
        type,
        ...(requestId === undefined ? {} : { requestId }),
        envelope,
      };
    }
    // The schemas transform nothing, so the checked input is the frame; returning it
    // (not zod's copy) keeps a `__proto__` key an inert own property.
    return { kind: "frame", frame: record as TFrame, envelope };
  } catch (error) {
    return { kind: "invalid", error: `frame could not be decoded: ${(error as Error)?.name ?? "error"}`, envelope: {} };
  }
}

/** JSON.parse messages can quote the input; keep only the position. */
function describeJsonError(error: string): string {
  if (!error.startsWith("invalid JSON")) return error;
  const position = /position (\d+)/.exec(error);
  return position ? `invalid JSON at position ${position[1]}` : "invalid JSON";
}

/**
 * `type` and `request_id` of a frame the depth cap refused, read by one scan of its top level: the
 * string values of those two keys at depth 1, without building the document (parsing a megabyte of
 * nested brackets just to read two strings would build a million arrays). `undefined` when absent.
 */
function topLevelIds(text: string): { type?: string | undefined; requestId?: string | undefined } {
  const found: { type?: string | undefined; requestId?: string | undefined } = {};
  let depth = 0;
  let key: string | undefined;
  let expectKey = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 34 /* " */) {
      let end = index + 1;
      while (end < text.length && text.charCodeAt(end) !== 34) end += text.charCodeAt(end) === 92 ? 2 : 1;
      if (depth === 1) {
        let literal: unknown;
        try {
          literal = JSON.parse(text.slice(index, end + 1));
        } catch {
          return found;
        }
        if (expectKey) key = literal as string;
        else if (key === "type" && found.type === undefined) found.type = literal as string;
        else if (key === "request_id" && found.requestId === undefined) found.requestId = literal as string;
        expectKey = false;
      }
      index = end;
    } else if (code === 123 /* { */ || code === 91 /* [ */) {
      depth++;
      expectKey = depth === 1 && code === 123;
    } else if (code === 125 /* } */ || code === 93 /* ] */) depth--;
    else if (depth === 1 && code === 44 /* , */) expectKey = true;
    else if (depth === 1 && code === 58 /* : */) expectKey = false;
  }
  return found;
}
