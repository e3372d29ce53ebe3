/**
 * `findProtoKey` walks every call's input before its validator runs: it must find an own
 * `__proto__` key anywhere (at the path a reader can act on) and nothing else, whatever the shape.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findProtoKey } from "../../packages/toolrelay/src/tools/index.js";
import { formatPath } from "../../packages/toolrelay/src/wire/index.js";

/** Every path of an own `__proto__` key, by recursion (inputs here are shallow). */
function allProtoPaths(value: unknown, path: Array<string | number> = []): string[] {
  if (typeof value !== "object" || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item, index) => allProtoPaths(item, [...path, index]));
  const own = Object.hasOwn(value, "__proto__") ? [formatPath([...path, "__proto__"])] : [];
  return [...own, ...Object.keys(value).flatMap((key) => allProtoPaths((value as Record<string, unknown>)[key], [...path, key]))];
}

/** JSON texts whose objects sometimes carry a `__proto__` key (JSON.parse keeps it as an own key). */
const key = fc.oneof(fc.constantFrom("__proto__", "a", "constructor", "prototype"), fc.string({ maxLength: 3 }));
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 1 }), tie("object"), fc.array(tie("tree"), { maxLength: 3 })),
  object: fc.array(fc.tuple(key, tie("tree")), { maxLength: 3 }),
}));
function toText(value: unknown): string {
  if (!Array.isArray(value) || !value.every((entry) => Array.isArray(entry) && entry.length === 2 && typeof entry[0] === "string"))
    return Array.isArray(value) ? `[${value.map(toText).join(",")}]` : JSON.stringify(value);
  return `{${(value as Array<[string, unknown]>).map(([name, item]) => `${JSON.stringify(name)}:${toText(item)}`).join(",")}}`;
}

describe("findProtoKey", () => {
  it("finds a key exactly when there is one, and names one of its paths, in 3,000 generated inputs", () => {
    let found = 0;
    fc.assert(
      fc.property(tree, (value) => {
        const input: unknown = JSON.parse(toText(value));
        const path = findProtoKey(input);
        const paths = allProtoPaths(input);
        if (path !== undefined) found++;
        if (paths.length === 0) expect(path).toBeUndefined();
        else expect(paths).toContain(path);
      }),
      { numRuns: 3000 },
    );
    expect(found).toBeGreaterThan(0);
  });

  it("names the path, past arrays and undefined members, and is silent for none", () => {
    const nested = JSON.parse('{"a":[1,{"b":{"__proto__":{"x":1}}}]}');
    expect(allProtoPaths(nested)).toHaveLength(1);
    expect(findProtoKey(nested)).toBe(allProtoPaths(nested)[0]);
    expect(findProtoKey(nested)).toBe(formatPath(["a", 1, "b", "__proto__"]));
    expect(findProtoKey([undefined, JSON.parse('{"__proto__":1}')])).toMatch(/__proto__/);
    expect(findProtoKey({ constructor: { prototype: 1 } })).toBeUndefined();
    expect(findProtoKey("__proto__")).toBeUndefined();
    expect(findProtoKey(Array.from({ length: 200_000 }, () => 0))).toBeUndefined();
  });
});
