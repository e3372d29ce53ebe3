import { describe, expect, it } from "vitest";
import { clampToolText, formatCount } from "../../packages/toolrelay/src/tools/index.js";

/** 40,000 characters where every position is recognisable: "a".."z" repeating. */
function alphabetText(length: number): string {
  let text = "";
  for (let index = 0; index < length; index++) text += String.fromCharCode(97 + (index % 26));
  return text;
}

describe("clampToolText", () => {
  it("returns text that fits unchanged, up to the limit exactly", () => {
    expect(clampToolText("short")).toBe("short");
    const exact = "x".repeat(32_000);
    expect(clampToolText(exact)).toBe(exact);
  });

  it("clamps 40,000 characters to exactly 32,000, in the runtime's layout, keeping 15,953 + 15,953", () => {
    const text = alphabetText(40_000);
    const clamped = clampToolText(text);
    // Overhead: marker "\n... [8,094 characters omitted] ...\n" (36) and notice
    // "\n\n[Output truncated: showing 31,906 of 40,000 characters.]" (58) = 94.
    // 32,000 - 94 = 31,906 shown: 15,953 from the head and 15,953 from the tail.
    const expected =
      text.slice(0, 15_953) +
      "\n... [8,094 characters omitted] ...\n" +
      text.slice(40_000 - 15_953) +
      "\n\n[Output truncated: showing 31,906 of 40,000 characters.]";
    expect(clamped).toBe(expected);
    expect(clamped).toHaveLength(32_000);
  });

  it("never exceeds the limit, so the runtime's own clamp leaves the text alone", () => {
    for (const length of [32_001, 32_100, 33_000, 99_999, 100_000, 1_234_567]) {
      const clamped = clampToolText("y".repeat(length));
      expect(clamped.length).toBeLessThanOrEqual(32_000);
      expect(clamped.length).toBeGreaterThan(31_850);
      expect(clamped).toContain(`of ${formatCount(length)} characters.]`);
    }
  });

  it("honours a custom limit", () => {
    const clamped = clampToolText("z".repeat(1_000), 300);
    expect(clamped.length).toBeLessThanOrEqual(300);
    expect(clamped).toMatch(
      /^z+\n\.\.\. \[[\d,]+ characters omitted\] \.\.\.\nz+\n\n\[Output truncated: showing [\d,]+ of 1,000 characters\.\]$/,
    );
  });

  it("cuts without a notice when the limit is too small for one", () => {
    expect(clampToolText("abcdefghij", 4)).toBe("abcd");
  });

  it("does not split a surrogate pair at either cut", () => {
    const text = "😀".repeat(20_000); // 40,000 UTF-16 code units
    const clamped = clampToolText(text);
    expect(clamped.length).toBeLessThanOrEqual(32_000);
    expect(() => encodeURIComponent(clamped)).not.toThrow(); // throws on a lone surrogate
  });

  it("formats counts with thousands separators", () => {
    expect(formatCount(7)).toBe("7");
    expect(formatCount(32_000)).toBe("32,000");
    expect(formatCount(1_234_567)).toBe("1,234,567");
  });
});
