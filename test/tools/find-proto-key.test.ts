/**
 * `findProtoKey` walks every call's input before its validator runs: it must find an own
 * `__proto__` key anywhere (at the path a reader can act on) and nothing else, whatever the shape.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findProtoKey } from "../../src/tools/index.js";
import { formatPath } from "../../src/wire/index.js";

/** The plain walk: every own key of every object, depth first, keeping paths. */
function reference(input: unknown): string | undefined {
  const stack: Array<[unknown, Array<string | number>]> = [[input, []]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        stack.push([item, [...path, index]]);
      });
      continue;
    }
    if (Object.hasOwn(value, "__proto__")) return formatPath([...path, "__proto__"]);
    for (const [key, item] of Object.entries(value)) stack.push([item, [...path, key]]);
  }
  return undefined;
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
  it("finds what the plain walk finds, at the same path, in 3,000 generated inputs", () => {
    let found = 0;
    fc.assert(
      fc.property(tree, (value) => {
        const input: unknown = JSON.parse(toText(value));
        const path = findProtoKey(input);
        if (path !== undefined) found++;
        expect(path).toBe(reference(input));
      }),
      { numRuns: 3000 },
    );
    expect(found).toBeGreaterThan(0);
  });

  it("names the path, past arrays and undefined members, and is silent for none", () => {
    expect(findProtoKey(JSON.parse('{"a":[1,{"b":{"__proto__":{"x":1}}}]}'))).toBe(
      reference(JSON.parse('{"a":[1,{"b":{"__proto__":{"x":1}}}]}')),
    );
    expect(findProtoKey(JSON.parse('{"a":[1,{"b":{"__proto__":{"x":1}}}]}'))).toMatch(/__proto__/);
    expect(findProtoKey([undefined, JSON.parse('{"__proto__":1}')])).toMatch(/__proto__/);
    expect(findProtoKey({ constructor: { prototype: 1 } })).toBeUndefined();
    expect(findProtoKey("__proto__")).toBeUndefined();
    expect(findProtoKey(Array.from({ length: 200_000 }, () => 0))).toBeUndefined();
  });
});
