import { describe, expect, it } from "vitest";
import { IdempotencyKeyCache } from "../../packages/toolrelay/src/transport/idempotency-key-cache.js";

describe("IdempotencyKeyCache", () => {
  it("reports a key as seen only from its second arrival on", () => {
    const cache = new IdempotencyKeyCache();
    expect(cache.seen("stream_delta:1:a")).toBe(false);
    expect(cache.seen("stream_delta:1:a")).toBe(true);
    expect(cache.seen("stream_delta:1:a")).toBe(true);
    expect(cache.seen("stream_delta:1:b")).toBe(false);
  });

  it("keeps 1,000 keys by default and evicts the least recently seen", () => {
    const cache = new IdempotencyKeyCache();
    expect(cache.capacity).toBe(1_000);
    for (let index = 0; index < 1_000; index++) cache.seen(`k${index}`);
    expect(cache.size).toBe(1_000);
    cache.seen("k0"); // refresh k0: k1 is now the oldest
    cache.seen("k1000");
    expect(cache.size).toBe(1_000);
    expect(cache.has("k0")).toBe(true);
    expect(cache.has("k1")).toBe(false);
    expect(cache.has("k1000")).toBe(true);
  });

  it("stays within its capacity under many distinct keys", () => {
    const cache = new IdempotencyKeyCache({ capacity: 3 });
    for (let index = 0; index < 10_000; index++) cache.seen(`k${index}`);
    expect(cache.size).toBe(3);
    expect(cache.has("k9999")).toBe(true);
    expect(cache.has("k9996")).toBe(false);
  });

  it("rejects a capacity that is not a positive integer", () => {
    expect(() => new IdempotencyKeyCache({ capacity: 0 })).toThrow(RangeError);
    expect(() => new IdempotencyKeyCache({ capacity: 1.5 })).toThrow(RangeError);
  });
});
