/**
 * The text of a client tool's `tool-result` event: what the SDK sent the model, not the runtime's
 * stream copy of it. The runtime cuts its copy to 30,000 characters with a notice of its own
 * (a second notice after the SDK's own clamp at 32,000), and shows an image-only result as JSON
 * with the base64 data; the model got the SDK's text (docs/protocol.md#result-content).
 *
 * The SDK's answer is used only when the runtime's copy shows that it is the answer the model got
 * (same status, and the copy is the answer's text or a shortened copy of it): a call the runtime
 * settled itself (its timeout, a closed connection, an abort) keeps the runtime's text. So does a
 * text longer than the runtime's own limit (a `maxResultChars` above 32,000): the runtime clamped
 * it again, in a way the SDK cannot repeat.
 */
import { RUNTIME_TOOL_RETURN_MAX_CHARS } from "../internal/runtime-limits.js";
import { formatCount } from "../tools/index.js";
import type { ToolCallResponseBody, WireContentBlock } from "../wire/index.js";

/** The runtime cuts its stream copy of a longer result (`truncateInterruptToolReturn`); a shorter one is copied as it is. */
const RUNTIME_COPY_MAX_CHARS = 30_000;
/** How much of an answer's beginning the runtime's cut copy must repeat to count as a copy of it. */
const COPY_PREFIX_CHARS = 1_000;
/** How much of an image's base64 data the runtime's JSON copy of an image-only result must contain. */
const IMAGE_DATA_PREFIX_CHARS = 64;

/**
 * The text of the `tool-result` event of a client tool call: `sent` rendered as the model got it
 * when the runtime's copy (`runtimeText`, `runtimeIsError`) agrees with it, else `runtimeText`.
 * Text blocks are joined with `"\n"` (as the runtime joins them); an image is `[image: <mimeType>,
 * <n> bytes]`; an `error` answer reads `External tool execution error: <error>` (docs/protocol.md#error-texts).
 */
export function clientToolResultText(sent: ToolCallResponseBody | undefined, runtimeText: string, runtimeIsError: boolean): string {
  if (sent === undefined) return runtimeText;
  if ("error" in sent) {
    const text = `External tool execution error: ${sent.error}`;
    return runtimeIsError && isCopyOf(runtimeText, text) ? text : runtimeText;
  }
  const { content, is_error: isError } = sent.result;
  if ((isError === true) !== runtimeIsError) return runtimeText;
  const texts = content.flatMap((block) => (block.type === "text" ? [block.text] : []));
  const images = content.filter((block) => block.type === "image");
  if (images.length === 0) {
    // The runtime's own rule: the texts joined, or the raw parts as JSON when that is empty.
    const text = texts.join("\n") || JSON.stringify(content);
    return text.length <= RUNTIME_TOOL_RETURN_MAX_CHARS && isCopyOf(runtimeText, text) ? text : runtimeText;
  }
  if (texts.some((text) => text.length > RUNTIME_TOOL_RETURN_MAX_CHARS)) return runtimeText;
  // With images the runtime's copy is the texts joined, or (no text at all) the parts as JSON.
  const copied =
    texts.length > 0 ? isCopyOf(runtimeText, texts.join("\n")) : runtimeText.includes(images[0]!.data.slice(0, IMAGE_DATA_PREFIX_CHARS));
  return copied ? content.map(blockText).join("\n") : runtimeText;
}

/** `runtimeText` is `text`, or (for a text the runtime cuts) a cut copy of it that keeps its beginning. */
function isCopyOf(runtimeText: string, text: string): boolean {
  if (runtimeText === text) return true;
  return text.length > RUNTIME_COPY_MAX_CHARS && runtimeText.startsWith(text.slice(0, COPY_PREFIX_CHARS));
}

function blockText(block: WireContentBlock): string {
  if (block.type === "text") return block.text;
  return `[image: ${block.mimeType}, ${formatCount(Buffer.byteLength(block.data, "base64"))} bytes]`;
}
