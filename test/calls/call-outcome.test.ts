import { describe, expect, it } from "vitest";
import {
  MAX_LISTED_INPUT_ISSUES,
  expiredResponse,
  responseForOutcome,
  type CallOutcome,
} from "../../packages/toolrelay/src/calls/index.js";
import { toolCallResponseBodySchema } from "../../packages/toolrelay/src/wire/index.js";

const respond = (outcome: CallOutcome, safeToRetry = false) => responseForOutcome(outcome, { toolName: "write_file", safeToRetry });
const textOf = (body: ReturnType<typeof respond>): string => {
  if (!("result" in body)) throw new Error("expected a result");
  const block = body.result.content[0];
  if (block?.type !== "text") throw new Error("expected a text block");
  return block.text;
};

describe("responseForOutcome", () => {
  it("ok → result.content, no is_error", () => {
    const content = [{ type: "text" as const, text: "done" }];
    expect(respond({ kind: "ok", content })).toEqual({ result: { content } });
  });

  it("tool-error → result with is_error and the content", () => {
    const content = [{ type: "text" as const, text: "disk full" }];
    expect(respond({ kind: "tool-error", message: "disk full", content })).toEqual({ result: { content, is_error: true } });
  });

  it("tool-error with empty content → the message as text, with the failure marker", () => {
    expect(respond({ kind: "tool-error", message: "boom", content: [] })).toEqual({
      result: { content: [{ type: "text", text: "Error: boom" }], is_error: true },
    });
  });

  it("invalid-input → is_error listing each path and why, and asking for a fix", () => {
    const body = respond({
      kind: "invalid-input",
      issues: [
        { path: "path", message: "Invalid input: expected string, received number" },
        { path: "options.mode[0]", message: "Invalid option" },
        { path: "already.formatted", message: "Too big" },
        { path: "", message: "Unrecognized key" },
      ],
    });
    expect(body).toMatchObject({ result: { is_error: true } });
    const text = textOf(body);
    expect(text).toContain("write_file");
    expect(text).toContain("path: Invalid input: expected string, received number");
    expect(text).toContain("options.mode[0]: Invalid option");
    expect(text).toContain("already.formatted: Too big");
    expect(text).toContain("(root): Unrecognized key");
    expect(text.toLowerCase()).toContain("fix the arguments and call again");
  });

  it(`invalid-input lists at most ${MAX_LISTED_INPUT_ISSUES} issues and counts the rest`, () => {
    const issues = Array.from({ length: MAX_LISTED_INPUT_ISSUES + 5 }, (_, index) => ({ path: `items[${index}]`, message: "bad" }));
    const text = textOf(respond({ kind: "invalid-input", issues }));
    expect(text).toContain(`items[${MAX_LISTED_INPUT_ISSUES - 1}]: bad`);
    expect(text).not.toContain(`items[${MAX_LISTED_INPUT_ISSUES}]: bad`);
    expect(text).toContain("and 5 more");
  });

  it("invalid-input without issues still explains", () => {
    expect(textOf(respond({ kind: "invalid-input", issues: [] }))).toMatch(/\(root\).*\n.*call again/s);
  });

  it("unknown-tool → error naming the tool and the available ones", () => {
    expect(respond({ kind: "unknown-tool", toolName: "rm_rf", available: ["read_file", "write_file"] })).toEqual({
      error: "Unknown client tool: rm_rf. Client tools in this session: read_file, write_file",
    });
    expect(respond({ kind: "unknown-tool", toolName: "x", available: [] })).toEqual({
      error: "Unknown client tool: x. Client tools in this session: (none)",
    });
  });

  it("input-too-large → is_error with the size and the limit", () => {
    const body = respond({ kind: "input-too-large", bytes: 2_000_000, limit: 1_048_576 });
    expect(body).toMatchObject({ result: { is_error: true } });
    expect(textOf(body)).toContain("2000000 bytes");
    expect(textOf(body)).toContain("1048576 bytes");
  });

  it("timeout of a tool with effects → may have applied its effects", () => {
    expect(respond({ kind: "timeout", timeoutMs: 60_000 })).toEqual({
      result: {
        is_error: true,
        content: [
          {
            type: "text",
            text: "Error: tool write_file timed out after 60000 ms. It may have applied its effects: inspect state before retrying.",
          },
        ],
      },
    });
  });

  it("timeout of a tool safe to retry (read-only or idempotent) → says so", () => {
    expect(textOf(respond({ kind: "timeout", timeoutMs: 5 }, true))).toBe(
      "Error: tool write_file timed out after 5 ms. It has no side effects; it is safe to retry.",
    );
  });

  it("busy → error naming the limit, nothing run", () => {
    expect(respond({ kind: "busy", limit: 256 })).toEqual({
      error: "Tool write_file was not run: the client is already running 256 tool calls. Try again later.",
    });
  });

  it("cancelled → error with the reason", () => {
    expect(respond({ kind: "cancelled", reason: "the turn was aborted" })).toEqual({ error: "Tool call cancelled: the turn was aborted" });
  });

  it("disconnected → error: interrupted, outcome unknown", () => {
    expect(respond({ kind: "disconnected", graceMs: 30_000 })).toEqual({
      error: "Tool write_file was interrupted when the client lost its connection; outcome unknown: inspect state before retrying.",
    });
  });

  it("expiredResponse → outcome unknown, already ran", () => {
    expect(expiredResponse("call-7")).toEqual({
      error: "Result expired; outcome unknown: the call call-7 already ran. Inspect state before retrying.",
    });
  });

  it("every response is a valid wire body", () => {
    const outcomes: CallOutcome[] = [
      { kind: "ok", content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] },
      { kind: "tool-error", message: "x", content: [] },
      { kind: "invalid-input", issues: [{ path: "a", message: "b" }] },
      { kind: "unknown-tool", toolName: "x", available: ["y"] },
      { kind: "input-too-large", bytes: 2, limit: 1 },
      { kind: "timeout", timeoutMs: 1 },
      { kind: "cancelled", reason: "r" },
      { kind: "disconnected", graceMs: 1 },
      { kind: "busy", limit: 1 },
    ];
    for (const outcome of outcomes) expect(toolCallResponseBodySchema.safeParse(respond(outcome)).success).toBe(true);
    expect(toolCallResponseBodySchema.safeParse(expiredResponse("x")).success).toBe(true);
  });
});
