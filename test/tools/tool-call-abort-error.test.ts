import { describe, expect, it } from "vitest";
import { ToolCallAbortError } from "../../packages/toolrelay/src/tools/index.js";

describe("ToolCallAbortError", () => {
  it("names a timeout TimeoutError and says so", () => {
    const error = ToolCallAbortError.timeout(1_500);
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(ToolCallAbortError);
    expect(error).toMatchObject({ kind: "timeout", name: "TimeoutError" });
    expect(error.message).toMatch(/timed out after 1500 ms/);
  });

  it("names a cancellation AbortError with its reason", () => {
    const error = ToolCallAbortError.cancelled("the turn was aborted");
    expect(error).toMatchObject({ kind: "cancelled", name: "AbortError" });
    expect(error.message).toMatch(/cancelled: the turn was aborted/);
  });

  it("names a lost link AbortError and says the connection was lost", () => {
    const error = ToolCallAbortError.disconnected(30_000);
    expect(error).toMatchObject({ kind: "disconnected", name: "AbortError" });
    expect(error.message).toMatch(/lost its connection/);
    expect(error.message).toMatch(/30000 ms/);
  });

  it("is recognised across copies by its brand, and nothing else is", () => {
    const foreign = Object.assign(new Error("x"), { [Symbol.for("toolrelay.tool-call-abort-error")]: true });
    expect(ToolCallAbortError.is(foreign)).toBe(true);
    expect(ToolCallAbortError.is(new Error("x"))).toBe(false);
    expect(ToolCallAbortError.is(null)).toBe(false);
    expect(new DOMException("x", "AbortError")).not.toBeInstanceOf(ToolCallAbortError);
  });
});
