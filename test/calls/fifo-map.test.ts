import { describe, expect, it } from "vitest";
import { FifoMap } from "../../src/calls/fifo-map.js";

describe("FifoMap", () => {
  it("finds the oldest entry after deletes, re-inserts and clear", () => {
    const map = new FifoMap<number>();
    expect(map.oldest()).toBeUndefined();
    map.set("a", 1);
    map.set("b", 2);
    map.set("c", 3);
    expect(map.oldest()).toEqual(["a", 1]);
    map.delete("a");
    expect(map.oldest()).toEqual(["b", 2]);
    map.set("b", 20); // re-inserted: now the newest
    expect(map.oldest()).toEqual(["c", 3]);
    expect([...map.entries()]).toEqual([["c", 3], ["b", 20]]);
    map.clear();
    expect(map.oldest()).toBeUndefined();
    expect(map.size).toBe(0);
  });

  it("keeps its side queue bounded under queue-like churn", () => {
    const map = new FifoMap<number>();
    for (let index = 0; index < 200_000; index++) {
      map.set(`k${index}`, index);
      if (map.size > 1_000) map.delete(map.oldest()![0]);
    }
    expect(map.size).toBe(1_000);
    expect(map.oldest()).toEqual(["k199000", 199_000]);
  });
});
