/**
 * Every frame recorded from the real Letta Code 0.32.18 app-server
 * (test/fixtures/real-peer/, written by the peer recorder) must decode: a
 * recorded inbound frame to `kind: "frame"` (or `unknown` for a type we
 * deliberately leave unmodelled), a recorded outbound frame must pass our own
 * strict outbound check (the real peer accepted it).
 */
import { describe, expect, it } from "vitest";
import {
  checkOutboundFrame,
  decodeFrame,
  decodeOutboundFrame,
  isKnownStreamDelta,
  knownStreamDeltaTypes,
} from "../../packages/toolrelay/src/wire/index.js";
import { loadFixtures } from "./load-fixtures.js";

/** Inbound frame types we choose not to model (they decode as `unknown`). */
const deliberatelyUnmodelled = new Set<string>([]);

interface Recorded {
  where: string;
  direction: "inbound" | "outbound";
  frame: Record<string, unknown>;
}

function recordedFrames(): Recorded[] {
  const frames: Recorded[] = [];
  for (const entry of loadFixtures("real-peer")) {
    if (entry.name.startsWith("inbound-") || entry.name.startsWith("outbound-")) {
      const direction = entry.name.startsWith("inbound-") ? "inbound" : "outbound";
      frames.push({ where: entry.name, direction, frame: entry.value as Record<string, unknown> });
    } else if (entry.name.startsWith("transcript-")) {
      (entry.value as Array<{ direction: "inbound" | "outbound"; frame: Record<string, unknown> }>).forEach((item, index) => {
        frames.push({ where: `${entry.name}[${index}]`, direction: item.direction, frame: item.frame });
      });
    }
  }
  return frames;
}

const recorded = recordedFrames();
const inbound = recorded.filter((entry) => entry.direction === "inbound");
const outbound = recorded.filter((entry) => entry.direction === "outbound");

describe("frames recorded from the real Letta Code peer", () => {
  it("are present (the recording is part of the repository)", () => {
    expect(inbound.length).toBeGreaterThan(20);
    expect(outbound.length).toBeGreaterThan(5);
  });

  it("inbound: every recorded frame decodes to a frame (or unknown when deliberately unmodelled)", () => {
    const failures: string[] = [];
    for (const entry of inbound) {
      const decoded = decodeFrame(JSON.stringify(entry.frame));
      const type = String(entry.frame.type);
      const expected = deliberatelyUnmodelled.has(type) ? "unknown" : "frame";
      if (decoded.kind !== expected) failures.push(`${entry.where}: ${JSON.stringify(decoded).slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
  });

  it("inbound: the envelope of every runtime event is extracted", () => {
    for (const entry of inbound) {
      if (typeof entry.frame.event_seq !== "number") continue;
      const decoded = decodeFrame(JSON.stringify(entry.frame));
      expect(decoded.envelope).toMatchObject({ event_seq: entry.frame.event_seq, idempotency_key: entry.frame.idempotency_key });
    }
  });

  it("inbound: recorded deltas of a modelled message_type are checked by their own schema", () => {
    const seen = new Set<string>();
    for (const entry of inbound) {
      if (entry.frame.type !== "stream_delta") continue;
      const decoded = decodeFrame(JSON.stringify(entry.frame));
      if (decoded.kind !== "frame" || decoded.frame.type !== "stream_delta") continue;
      const delta = decoded.frame.delta;
      expect(isKnownStreamDelta(delta)).toBe(knownStreamDeltaTypes.has(delta.message_type));
      seen.add(delta.message_type);
    }
    for (const type of [
      "assistant_message",
      "approval_request_message",
      "client_tool_start",
      "client_tool_end",
      "tool_return_message",
      "stop_reason",
    ]) {
      expect(seen).toContain(type);
    }
  });

  it("outbound: every frame the real peer accepted passes our strict outbound check", () => {
    const failures: string[] = [];
    for (const entry of outbound) {
      const check = checkOutboundFrame(entry.frame);
      if (!check.ok) failures.push(`${entry.where}: ${check.error}`);
      const decoded = decodeOutboundFrame(JSON.stringify(entry.frame));
      if (decoded.kind !== "frame") failures.push(`${entry.where}: decodeOutboundFrame → ${decoded.kind}`);
    }
    expect(failures).toEqual([]);
  });
});
