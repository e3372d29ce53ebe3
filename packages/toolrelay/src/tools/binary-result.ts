/**
 * Binary data returned by a tool: a `Buffer`, a `Uint8Array`, an `ArrayBuffer`. JSON would send a
 * `Uint8Array` as `{"0":137,"1":80,…}` and a `Buffer` as a list of byte values, which no model
 * can use. What the model can read besides text is an image, and Node's image APIs
 * (`fs.readFile`, a browser's screenshot, an image library's encoder) hand out `Buffer`s, so:
 *
 * - bytes that start like a PNG, JPEG, GIF or WebP file (the image types the model providers
 *   accept; their first bytes are unambiguous) become one image block, base64 with that type;
 * - any other bytes are refused with a tool error that says what to return instead: the SDK does
 *   not guess whether bytes are text in some encoding or a file the model cannot open, and
 *   base64 text of an unknown file would spend the model's context on nothing it can read.
 *
 * Other typed arrays (`Float32Array`, ...) and `DataView`s are refused too (`Array.from(value)`
 * sends the numbers). Binary data inside a returned object is refused by the JSON step.
 */
import type { WireContentBlock } from "../wire/index.js";

/** The image types recognised by their first bytes. */
const imageSignatures: ReadonlyArray<{ mimeType: string; matches(bytes: Uint8Array): boolean }> = [
  { mimeType: "image/png", matches: (bytes) => startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mimeType: "image/jpeg", matches: (bytes) => startsWith(bytes, [0xff, 0xd8, 0xff]) },
  { mimeType: "image/gif", matches: (bytes) => startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a")) },
  { mimeType: "image/webp", matches: (bytes) => startsWith(bytes, ascii("RIFF")) && startsWith(bytes.subarray(8), ascii("WEBP")) },
];

/** `true` for an `ArrayBuffer`, a `SharedArrayBuffer`, a typed array (a `Buffer` too) or a `DataView`. */
export function isBinaryData(value: unknown): value is ArrayBufferLike | ArrayBufferView {
  return (
    ArrayBuffer.isView(value) ||
    value instanceof ArrayBuffer ||
    (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer)
  );
}

/** The MIME type of an image by its first bytes: `image/png`, `image/jpeg`, `image/gif`, `image/webp`; else `undefined`. */
export function sniffImageMimeType(bytes: Uint8Array): string | undefined {
  return imageSignatures.find((signature) => signature.matches(bytes))?.mimeType;
}

/**
 * What binary data returned as a tool's whole result becomes: an image block for the bytes of a
 * PNG, JPEG, GIF or WebP image, else the reason it cannot be sent, written for the app's
 * developer (it becomes the tool error's text).
 */
export function binaryResultOf(
  value: ArrayBufferLike | ArrayBufferView,
): { ok: true; block: WireContentBlock } | { ok: false; reason: string } {
  const what = describeBinary(value);
  if (ArrayBuffer.isView(value) && !(value instanceof Uint8Array)) {
    const numbers = value instanceof DataView ? "" : " (Array.from(value) sends its numbers as JSON)";
    return { ok: false, reason: `Tool returned ${what}, which cannot reach the model as it is${numbers}.` };
  }
  const bytes = value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBufferLike);
  const mimeType = sniffImageMimeType(bytes);
  if (mimeType !== undefined)
    return {
      ok: true,
      block: { type: "image", data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"), mimeType },
    };
  return {
    ok: false,
    reason:
      `Tool returned ${what} that is not a PNG, JPEG, GIF or WebP image: the model reads only text and images. ` +
      'Return text (for text bytes, buffer.toString("utf8")), or an image block { type: "image", data: <base64>, mimeType }.',
  };
}

/** `a Buffer of 1,234 bytes`, `an ArrayBuffer of 3 bytes`, `a Float32Array of 4 items`. */
export function describeBinary(value: ArrayBufferLike | ArrayBufferView): string {
  const name = constructorName(value);
  const article = /^[AEIO]/.test(name) ? "an" : "a"; // "a Uint8Array", "an ArrayBuffer", "an Int8Array"
  if (ArrayBuffer.isView(value) && !(value instanceof DataView) && !(value instanceof Uint8Array)) {
    return `${article} ${name} of ${(value as unknown as ArrayLike<unknown>).length.toLocaleString("en-US")} items`;
  }
  return `${article} ${name} of ${value.byteLength.toLocaleString("en-US")} bytes`;
}

function constructorName(value: object): string {
  if (typeof Buffer === "function" && Buffer.isBuffer(value)) return "Buffer";
  const name: unknown = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } | undefined } | null)?.constructor?.name;
  return typeof name === "string" && name !== "" ? name : "binary value";
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((byte, index) => bytes[index] === byte);
}

function ascii(text: string): number[] {
  return [...text].map((character) => character.charCodeAt(0));
}
