import { describe, expect, it } from "vitest";
import { normalizeToolName } from "../../packages/toolrelay/src/openai/index.js";

describe("normalizeToolName", () => {
  it.each([
    ["read_file", "read_file"],
    ["functions.read_file", "read_file"],
    ["function.read_file", "read_file"],
    ["tools.read_file", "read_file"],
    ["mcp__client__read_file", "read_file"],
    ["mcp__my_server__do-it", "do-it"],
    ["mcp__client__functions.read_file", "read_file"],
    ["mcp__a__b__c", "b__c"],
    ["  read_file ", "read_file"],
    // Nothing is left after the prefix: the name stays as it is (and is refused later if invalid).
    ["functions.", "functions."],
    ["mcp__client__", "mcp__client__"],
    ["my.functions.read_file", "my.functions.read_file"],
  ])("%s → %s", (name, expected) => {
    expect(normalizeToolName(name)).toBe(expected);
  });
});
