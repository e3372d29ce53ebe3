/**
 * An MCP `tools/call` result as the model should read it. The runtime keeps
 * only text and image blocks, so every other MCP content kind becomes text
 * that says what it was:
 *
 * | MCP content                         | sent as                                             |
 * | ----------------------------------- | --------------------------------------------------- |
 * | `text`                              | the text                                            |
 * | `image`                             | the image (base64 `data`, `mimeType`)               |
 * | `resource` with `text`              | `Resource <uri> (<mimeType>):` and the text         |
 * | `resource` with an image `blob`     | the image                                           |
 * | `resource` with another `blob`      | a line naming it and its size (the bytes are not sent) |
 * | `resource_link`                     | `Resource link: <name> <uri>` and its description   |
 * | `audio`                             | a line naming it and its size (the model cannot hear it here) |
 *
 * `structuredContent` reaches the model once. MCP asks a server that returns
 * it to render the same content in its blocks too, so when there are blocks
 * they are sent and `structuredContent` is not repeated; when there are none,
 * `structuredContent` is sent as JSON text. `isError` is kept.
 */
import type { ToolResult } from "../tools/index.js";
import type { WireContentBlock } from "../wire/index.js";

/** The parts of an MCP `CallToolResult` this mapping reads (others are ignored). */
export interface McpCallResult {
  content?: ReadonlyArray<Record<string, unknown>> | undefined;
  structuredContent?: Record<string, unknown> | undefined;
  isError?: boolean | undefined;
  /** Old servers (protocol 2024-10-07) answer `{ toolResult }` instead. */
  toolResult?: unknown;
}

/** Map an MCP result to a toolrelay `ToolResult`. Never throws. */
export function mcpToolResult(result: McpCallResult): ToolResult {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const content: WireContentBlock[] = blocks.flatMap((block) => blockContent(block));
  if (blocks.length === 0) {
    if (result.structuredContent !== undefined) content.push(text(jsonText(result.structuredContent)));
    else if (result.toolResult !== undefined)
      content.push(text(typeof result.toolResult === "string" ? result.toolResult : jsonText(result.toolResult)));
  }
  return { content, isError: result.isError === true };
}

function blockContent(block: Record<string, unknown>): WireContentBlock[] {
  switch (block.type) {
    case "text":
      return [text(typeof block.text === "string" ? block.text : "")];
    case "image":
      return imageOr(block.data, block.mimeType, () => `[image without valid data (${String(block.mimeType)})]`);
    case "audio":
      return [text(`[audio (${String(block.mimeType)}), ${base64Bytes(block.data)} bytes: not sent, the model cannot hear it here]`)];
    case "resource_link": {
      const name = typeof block.title === "string" ? block.title : String(block.name ?? "");
      const description = typeof block.description === "string" ? `\n${block.description}` : "";
      const mime = typeof block.mimeType === "string" ? ` (${block.mimeType})` : "";
      return [text(`Resource link: ${name} ${String(block.uri)}${mime}${description}`)];
    }
    case "resource":
      return resourceContent(isRecord(block.resource) ? block.resource : {});
    default:
      return [text(`[MCP content of type ${JSON.stringify(block.type)}: not supported, not sent]`)];
  }
}

function resourceContent(resource: Record<string, unknown>): WireContentBlock[] {
  const uri = String(resource.uri ?? "(no uri)");
  const mimeType = typeof resource.mimeType === "string" ? resource.mimeType : undefined;
  if (typeof resource.text === "string") return [text(`Resource ${uri}${mimeType ? ` (${mimeType})` : ""}:\n${resource.text}`)];
  if (mimeType?.startsWith("image/")) return imageOr(resource.blob, mimeType, () => `[image resource ${uri} without valid data]`);
  return [text(`[binary resource ${uri}${mimeType ? ` (${mimeType})` : ""}, ${base64Bytes(resource.blob)} bytes: not sent]`)];
}

function imageOr(data: unknown, mimeType: unknown, fallback: () => string): WireContentBlock[] {
  if (typeof data === "string" && data !== "" && typeof mimeType === "string" && mimeType.startsWith("image/")) {
    return [{ type: "image", data, mimeType }];
  }
  return [text(fallback())];
}

function text(value: string): WireContentBlock {
  return { type: "text", text: value };
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Decoded size of base64 text (0 when it is not a string). */
function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
