/**
 * decodeFrame runs inside socket callbacks: it must never throw, whatever
 * arrives, must answer pathological nesting quickly, and must not let
 * `__proto__` keys reach any prototype.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeFrame, decodeOutboundFrame, inboundFrameSchemasByType, type DecodedFrame } from "../../packages/toolrelay/src/wire/index.js";

function expectWellFormed(decoded: DecodedFrame<unknown>): void {
  expect(["frame", "unknown", "invalid"]).toContain(decoded.kind);
  expect(typeof decoded.envelope).toBe("object");
  if (decoded.kind === "invalid") expect(typeof decoded.error).toBe("string");
}

const knownTypes = [...inboundFrameSchemasByType.keys()];

describe("decodeFrame never throws", () => {
  it("for 2,000 arbitrary strings (any code points)", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: "binary", maxLength: 200 }), fc.string({ unit: "grapheme-ascii", maxLength: 200 })),
        (input) => {
          expectWellFormed(decodeFrame(input));
          expectWellFormed(decodeOutboundFrame(input));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("for 2,000 arbitrary JSON values, classifying non-objects and type-less objects as invalid", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const decoded = decodeFrame(JSON.stringify(value));
        expectWellFormed(decoded);
        const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
        if (!isObject) expect(decoded).toMatchObject({ kind: "invalid", error: "frame is not a JSON object" });
        else if (typeof (value as { type?: unknown }).type !== "string") expect(decoded).toMatchObject({ kind: "invalid" });
        else if (!inboundFrameSchemasByType.has((value as { type: string }).type)) expect(decoded.kind).toBe("unknown");
      }),
      { numRuns: 2000 },
    );
  });

  it("for 2,000 objects with a known type and arbitrary fields (never unknown, never a throw)", () => {
    const field = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({
        message_type: fc.constantFrom("assistant_message", "tool_return_message", "client_tool_start", "other"),
        content: fc.jsonValue({ maxDepth: 2 }),
      }),
      fc.record({ agent_id: fc.oneof(fc.string(), fc.constant(null)), conversation_id: fc.jsonValue({ maxDepth: 1 }) }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...knownTypes),
        fc.dictionary(
          fc.constantFrom(
            "request_id",
            "delta",
            "runtime",
            "input",
            "tool_name",
            "tool_call_id",
            "success",
            "request",
            "loop_status",
            "seq",
            "event_seq",
            "__proto__",
            "constructor",
          ),
          field,
        ),
        (type, fields) => {
          const decoded = decodeFrame(JSON.stringify({ ...fields, type }));
          expectWellFormed(decoded);
          expect(decoded.kind).not.toBe("unknown");
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("decodeFrame with pathological nesting", () => {
  it("answers a 10,000-level nested document quickly, as invalid", () => {
    const arrays = "[".repeat(10_000) + "]".repeat(10_000);
    const objects = `{"type":"stream_delta","delta":${'{"a":'.repeat(10_000)}1${"}".repeat(10_001)}`;
    const started = performance.now();
    expect(decodeFrame(arrays)).toMatchObject({ kind: "invalid", error: expect.stringContaining("nested deeper") });
    expect(decodeFrame(objects)).toMatchObject({ kind: "invalid", error: expect.stringContaining("nested deeper") });
    expect(decodeOutboundFrame(objects)).toMatchObject({ kind: "invalid" });
    expect(performance.now() - started).toBeLessThan(250);
  });

  it("answers a megabyte of unterminated brackets quickly", () => {
    const started = performance.now();
    expect(decodeFrame("[".repeat(1_000_000))).toMatchObject({ kind: "invalid" });
    expect(performance.now() - started).toBeLessThan(250);
  });

  it("still names the type and request id of a request refused for its depth (so it can be answered), read from its top level only", () => {
    const deep =
      '{"type":"external_tool_call_request","note":{"request_id":"nested-not-this"},"request_id":"external-tool-7","input":' +
      "[".repeat(5_000) +
      "]".repeat(5_000) +
      "}";
    expect(decodeFrame(deep)).toMatchObject({
      kind: "invalid",
      type: "external_tool_call_request",
      requestId: "external-tool-7",
      error: expect.stringContaining("nested deeper"),
    });
    const escaped = `{"type":"x\\"y","request_id":"a\\"b","deep":${"[".repeat(300)}${"]".repeat(300)}}`;
    expect(decodeFrame(escaped)).toMatchObject({ kind: "invalid", type: 'x"y', requestId: 'a"b' });
    expect(decodeFrame("[".repeat(1_000_000))).toMatchObject({ kind: "invalid" });
    expect(decodeFrame("[".repeat(1_000_000))).not.toHaveProperty("requestId");
  });

  it("does not count brackets inside strings", () => {
    const frame = JSON.stringify({ type: "update_device_status", device_status: { note: "[".repeat(10_000) } });
    expect(decodeFrame(frame)).toMatchObject({ kind: "frame" });
  });
});

describe("decodeFrame and __proto__", () => {
  const polluting = [
    '{"type":"pong","__proto__":{"polluted":true}}',
    '{"type":"external_tool_call_request","request_id":"r","tool_call_id":"t","tool_name":"x","input":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}',
    '{"type":"stream_delta","delta":{"message_type":"novel","__proto__":{"polluted":true}}}',
    '{"type":"stream_delta","delta":{"message_type":"assistant_message","content":[{"type":"text","text":"x","__proto__":{"polluted":true}}]}}',
    '{"type":"not_modelled","__proto__":{"polluted":true}}',
    '{"__proto__":{"type":"pong","seq":5}}',
  ];

  it.each(polluting.map((input, index) => [index, input] as const))("input %i pollutes no prototype", (_index, input) => {
    const decoded = decodeFrame(input);
    expectWellFormed(decoded);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).type).toBeUndefined();
  });

  it("keeps __proto__ as an inert own property of the decoded frame", () => {
    const decoded = decodeFrame(polluting[1]!);
    expect(decoded.kind).toBe("frame");
    if (decoded.kind !== "frame" || decoded.frame.type !== "external_tool_call_request") return;
    const input = decoded.frame.input;
    expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
    expect(Object.hasOwn(input, "__proto__")).toBe(true);
    expect((input as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("does not read the type or envelope through a __proto__ key", () => {
    expect(decodeFrame(polluting[5]!)).toEqual({ kind: "invalid", error: 'frame has no string "type"', envelope: {} });
  });
});
