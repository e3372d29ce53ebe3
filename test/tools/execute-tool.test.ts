import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  defineTool,
  errorResult,
  executeTool as executeWithCallback,
  type ClientTool,
  type ExecutionOutcome,
  type ToolCallContext,
  type ToolReturnValue,
} from "../../packages/toolrelay/src/tools/index.js";

/** executeTool as a promise (it hands its outcome to a callback). */
const executeTool = (
  tool: ClientTool,
  input: unknown,
  callContext: ToolCallContext,
  options: { maxResultChars?: number } = {},
): Promise<ExecutionOutcome> =>
  new Promise((resolve) =>
    executeWithCallback(tool, input, callContext, options.maxResultChars ?? 32_000, (_token, outcome) => resolve(outcome), undefined),
  );

function context(overrides: Partial<ToolCallContext> = {}): ToolCallContext {
  return {
    signal: new AbortController().signal,
    toolCallId: "call-1",
    agentId: "agent-1",
    conversationId: "conv-1",
    idempotencyKey: "tr1_test",
    progress: () => {},
    ...overrides,
  };
}

function toolReturning(execute: () => ToolReturnValue | PromiseLike<ToolReturnValue>) {
  return defineTool({ name: "t", description: "d", inputSchema: z.object({}), execute });
}

describe("executeTool", () => {
  it("passes the parsed input and the context through, and returns ok content", async () => {
    const execute = vi.fn((input: { city: string }, callContext: ToolCallContext) => {
      callContext.progress("looking");
      return `sunny in ${input.city}`;
    });
    const tool = defineTool({ name: "w", description: "d", inputSchema: z.object({ city: z.string() }), execute });
    const progress = vi.fn();
    const callContext = context({ progress });
    await expect(executeTool(tool, { city: "Paris" }, callContext)).resolves.toEqual({
      kind: "ok",
      content: [{ type: "text", text: "sunny in Paris" }],
      output: "sunny in Paris",
    });
    expect(execute).toHaveBeenCalledExactlyOnceWith({ city: "Paris" }, callContext);
    expect(progress).toHaveBeenCalledWith("looking");
  });

  it("turns a synchronous throw into a tool-error", async () => {
    const tool = toolReturning(() => {
      throw new Error("disk on fire");
    });
    await expect(executeTool(tool, {}, context())).resolves.toEqual({
      kind: "tool-error",
      message: "disk on fire",
      content: [{ type: "text", text: "Error: tool t failed: disk on fire" }],
    });
  });

  it("turns a rejected promise into a tool-error", async () => {
    const tool = toolReturning(async () => {
      await Promise.resolve();
      throw new RangeError("out of range");
    });
    await expect(executeTool(tool, {}, context())).resolves.toMatchObject({ kind: "tool-error", message: "out of range" });
  });

  it.each([
    ["a string", "plain failure", "plain failure"],
    ["a number", 42, "42"],
    ["undefined", undefined, "undefined"],
    ["an object with a message", { message: "from object" }, "from object"],
    ["a plain object", { code: 7 }, '{"code":7}'],
    ["an Error without a message", new TypeError(), "TypeError"],
    ["an object that cannot become text", Object.create(null) as object, "could not be converted to text"],
  ])("turns a thrown %s into a tool-error message", async (_label, thrown, expected) => {
    const tool = toolReturning(() => {
      throw thrown;
    });
    const outcome = await executeTool(tool, {}, context());
    expect(outcome.kind).toBe("tool-error");
    expect(outcome).toMatchObject({ message: expect.stringContaining(expected) });
  });

  it("turns a returned { content, isError: true } into a tool-error keeping its content", async () => {
    const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };
    const tool = toolReturning(() => ({ content: [{ type: "text" as const, text: "quota exceeded" }, image], isError: true }));
    await expect(executeTool(tool, {}, context())).resolves.toEqual({
      kind: "tool-error",
      message: "quota exceeded",
      content: [{ type: "text", text: "Error: tool t reported an error: quota exceeded" }, image],
    });
    await expect(
      executeTool(
        toolReturning(() => errorResult("nope")),
        {},
        context(),
      ),
    ).resolves.toMatchObject({
      kind: "tool-error",
      message: "nope",
    });
  });

  it("turns an unsendable result into a tool-error", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(
      executeTool(
        toolReturning(() => cyclic),
        {},
        context(),
      ),
    ).resolves.toMatchObject({
      kind: "tool-error",
      message: expect.stringContaining("circular reference"),
    });
    await expect(
      executeTool(
        toolReturning(() => [{ type: "text" }]),
        {},
        context(),
      ),
    ).resolves.toMatchObject({
      kind: "tool-error",
      message: expect.stringContaining("block 0"),
    });
  });

  it("clamps results and error messages to maxResultChars", async () => {
    const ok = await executeTool(
      toolReturning(() => "r".repeat(5_000)),
      {},
      context(),
      { maxResultChars: 1_000 },
    );
    expect(ok.kind).toBe("ok");
    expect((ok.content[0] as { text: string }).text.length).toBeLessThanOrEqual(1_000);
    const failed = await executeTool(
      toolReturning(() => {
        throw new Error("e".repeat(5_000));
      }),
      {},
      context(),
      { maxResultChars: 1_000 },
    );
    expect(failed.kind).toBe("tool-error");
    expect((failed.content[0] as { text: string }).text.length).toBeLessThanOrEqual(1_000);
    expect((failed.content[0] as { text: string }).text).toMatch(/^Error: tool t failed: e+/);
  });

  it("waits for a thenable and reports one that rejects", async () => {
    const thenable: PromiseLike<ToolReturnValue> = {
      // biome-ignore lint/suspicious/noThenProperty: the subject is a thenable that is not a Promise
      then: (_resolve, reject) => {
        reject?.(new Error("thenable failed"));
        return undefined as never;
      },
    };
    await expect(
      executeTool(
        toolReturning(() => thenable),
        {},
        context(),
      ),
    ).resolves.toMatchObject({
      kind: "tool-error",
      message: "thenable failed",
    });
  });

  it("answers a synchronous result synchronously (no promise in between)", () => {
    let seen: ExecutionOutcome | undefined;
    executeWithCallback(
      toolReturning(() => "now"),
      {},
      context(),
      32_000,
      (_token, outcome) => (seen = outcome),
      undefined,
    );
    expect(seen).toEqual({ kind: "ok", content: [{ type: "text", text: "now" }], output: "now" });
  });

  it("a result whose then getter throws is a tool-error, not an exception", async () => {
    // biome-ignore lint/suspicious/noThenProperty: a `then` getter that throws, on purpose
    const hostile = Object.defineProperty({}, "then", {
      get: () => {
        throw new Error("trap");
      },
    });
    await expect(
      executeTool(
        toolReturning(() => hostile as ToolReturnValue),
        {},
        context(),
      ),
    ).resolves.toMatchObject({ kind: "tool-error", message: "trap" });
  });
});
