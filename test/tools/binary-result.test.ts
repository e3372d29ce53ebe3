/**
 * Binary data returned by a tool (issue 24): JSON would send a Uint8Array as {"0":137,…} and a
 * Buffer as a list of byte values. An image's bytes (PNG, JPEG, GIF, WebP, told by their first
 * bytes) become an image block; any other bytes, other typed arrays and binary data inside an
 * object are a tool error that says what to return instead.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineTool,
  executeTool as executeWithCallback,
  normalizeToolResult,
  type ExecutionOutcome,
  type ToolReturnValue,
} from "../../packages/toolrelay/src/tools/index.js";
import { sniffImageMimeType } from "../../packages/toolrelay/src/tools/binary-result.js";

/** Real 1×1 image files. */
const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const gif = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
const webp = Buffer.from("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==", "base64");
/** The start of a JFIF file: the marker the sniff reads. */
const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);

const run = (value: ToolReturnValue): Promise<ExecutionOutcome> =>
  new Promise((resolve) => {
    const tool = defineTool({ name: "snap", description: "d", inputSchema: z.object({}), execute: () => value });
    const context = {
      signal: new AbortController().signal,
      toolCallId: "c",
      agentId: "a",
      conversationId: "v",
      idempotencyKey: "tr1_test",
      progress: () => {},
    };
    executeWithCallback(tool, {}, context, 32_000, (_token, outcome) => resolve(outcome), undefined);
  });

describe("a tool that returns binary data", () => {
  it.each([
    ["a PNG Buffer", png, "image/png"],
    ["a GIF Uint8Array", new Uint8Array(gif), "image/gif"],
    ["a WebP ArrayBuffer", webp.buffer.slice(webp.byteOffset, webp.byteOffset + webp.byteLength), "image/webp"],
    ["a JPEG Buffer", jpeg, "image/jpeg"],
  ])("%s reaches the model as that image, base64", async (_, value, mimeType) => {
    await expect(run(value)).resolves.toEqual({
      kind: "ok",
      content: [
        { type: "image", data: (value instanceof ArrayBuffer ? Buffer.from(value) : Buffer.from(value)).toString("base64"), mimeType },
      ],
      // The app's value is the bytes as returned.
      output: value,
    });
  });

  it("a view into a larger buffer sends only its own bytes", () => {
    const padded = Buffer.concat([Buffer.from("junk"), png, Buffer.from("more")]);
    const view = new Uint8Array(padded.buffer, padded.byteOffset + 4, png.byteLength);
    expect(normalizeToolResult(view).content).toEqual([{ type: "image", data: png.toString("base64"), mimeType: "image/png" }]);
  });

  it('other bytes are a tool error saying what to return, never {"0":…} or a byte list', async () => {
    const text =
      "Tool returned a Buffer of 5 bytes that is not a PNG, JPEG, GIF or WebP image: the model reads only text and images. " +
      'Return text (for text bytes, buffer.toString("utf8")), or an image block { type: "image", data: <base64>, mimeType }.';
    await expect(run(Buffer.from("hello"))).resolves.toEqual({
      kind: "tool-error",
      message: text,
      content: [{ type: "text", text: `Error: tool snap reported an error: ${text}` }],
    });
    expect(normalizeToolResult(new Uint8Array([1, 2, 3])).content[0]).toEqual({
      type: "text",
      text: expect.stringMatching(/^Tool returned a Uint8Array of 3 bytes that is not a PNG/),
    });
    expect(normalizeToolResult(new ArrayBuffer(0)).content[0]).toEqual({
      type: "text",
      text: expect.stringMatching(/^Tool returned an ArrayBuffer of 0 bytes that is not a PNG/),
    });
  });

  it("other typed arrays and DataViews are a tool error (Array.from sends the numbers)", () => {
    expect(normalizeToolResult(new Float32Array([1.5, 2]))).toEqual({
      content: [
        {
          type: "text",
          text: "Tool returned a Float32Array of 2 items, which cannot reach the model as it is (Array.from(value) sends its numbers as JSON).",
        },
      ],
      isError: true,
    });
    expect(normalizeToolResult(new DataView(new ArrayBuffer(4)))).toEqual({
      content: [{ type: "text", text: "Tool returned a DataView of 4 bytes, which cannot reach the model as it is." }],
      isError: true,
    });
  });

  it("binary data inside an object or array is a tool error naming the key", () => {
    expect(normalizeToolResult({ name: "shot.png", file: png })).toEqual({
      content: [
        {
          type: "text",
          text:
            'Tool result could not be converted to JSON: it contains a Buffer of 70 bytes (at key "file"), which JSON would send as a list of numbers; ' +
            'return an image as its own block ({ type: "image", data: <base64>, mimeType }) or turn the bytes into text.',
        },
      ],
      isError: true,
    });
    expect(normalizeToolResult([1, new Uint16Array(2)]).content[0]).toEqual({
      type: "text",
      text: expect.stringContaining('it contains a Uint16Array of 2 items (at key "1")'),
    });
  });

  it("an image block with bytes as its data is refused with how to encode them", () => {
    expect(normalizeToolResult({ content: [{ type: "image", data: png, mimeType: "image/png" }] }).content[0]).toEqual({
      type: "text",
      text: expect.stringContaining(
        'block 0 (image) needs base64 "data" as a non-empty string, got a Buffer of 70 bytes (encode it: Buffer.from(bytes).toString("base64"))',
      ),
    });
  });
});

describe("sniffImageMimeType", () => {
  it("reads the first bytes only, and knows no other type", () => {
    expect(sniffImageMimeType(png)).toBe("image/png");
    expect(sniffImageMimeType(png.subarray(0, 7))).toBeUndefined();
    expect(sniffImageMimeType(Buffer.from("RIFF\0\0\0\0WAVE"))).toBeUndefined();
    expect(sniffImageMimeType(Buffer.from("%PDF-1.7"))).toBeUndefined();
    expect(sniffImageMimeType(new Uint8Array())).toBeUndefined();
  });
});
