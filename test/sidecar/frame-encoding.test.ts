import { Encoder, encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { bodyCodec } from "../../packages/toolrelay/src/sidecar/frame-encoding.js";

describe("frame bodies", () => {
  it("JSON: compact JSON.stringify output, decoded without ever throwing", () => {
    const codec = bodyCodec("json");
    expect(Buffer.from(codec.encode({ type: "x", a: [1, "é"], b: undefined })).toString()).toBe('{"type":"x","a":[1,"é"]}');
    expect(codec.decode(Buffer.from('{"type":"x","__proto__":{"polluted":1}}'))).toMatchObject({ ok: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    for (const bad of [Buffer.from(""), Buffer.from("{"), Uint8Array.of(0xff, 0xfe), Buffer.from(`${"[".repeat(300)}${"]".repeat(300)}`)]) {
      expect(codec.decode(bad)).toMatchObject({ ok: false, error: expect.any(String) });
    }
  });

  it("MessagePack: the JSON data model only (binary, extension data, non-finite numbers, deep nesting and __proto__ keys are refused)", () => {
    const codec = bodyCodec("msgpack");
    expect(codec.decode(codec.encode({ type: "x", n: [1, -1, 1.5, 2 ** 40], s: "ü", o: {} }))).toEqual({
      ok: true,
      value: { type: "x", n: [1, -1, 1.5, 2 ** 40], s: "ü", o: {} },
    });
    expect(Buffer.from(codec.encode({ a: undefined, b: 1 })).toString("hex")).toBe(Buffer.from(encode({ b: 1 })).toString("hex"));
    // Deep values still go out (frames carry tool inputs up to the SDK's 256 levels).
    let nested: unknown = "x";
    for (let level = 0; level < 250; level++) nested = { nested };
    expect(codec.decode(codec.encode({ type: "x", nested }))).toMatchObject({ ok: true });
    let deep: unknown = 1;
    for (let level = 0; level < 300; level++) deep = [deep];
    const refused = [
      encode({ data: Uint8Array.of(1, 2) }),
      encode({ when: new Date(0) }),
      encode({ n: Number.NaN }),
      new Encoder({ maxDepth: 1_000 }).encode(deep),
      Buffer.from("85a95f5f70726f746f5f5f80", "hex"),
      Uint8Array.of(0xc1),
      new Uint8Array(),
    ];
    for (const bytes of refused) expect(codec.decode(bytes)).toMatchObject({ ok: false, error: expect.any(String) });
  });
});
