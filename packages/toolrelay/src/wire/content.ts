/**
 * Content blocks. Outbound (`result.content` of a tool response) only the two
 * block kinds the runtime keeps are allowed (`external-tool-content.ts` drops
 * every other part silently): `text` with a string `text`, and `image` with
 * base64 `data` and a `mimeType`. Inbound content (assistant messages, tool
 * returns) is lenient: a string, or parts of any `type`, text parts checked.
 */
import { z } from "zod/v4";
import { keyedUnion, type UnknownKeyed } from "./keyed-union.js";

/** A text block of a tool result. */
export const wireTextBlockSchema = z.strictObject({
  type: z.literal("text"),
  text: z.string(),
});
export type WireTextBlock = z.infer<typeof wireTextBlockSchema>;

/** An image block of a tool result: base64 `data` and its `mimeType` (e.g. `image/png`). */
export const wireImageBlockSchema = z.strictObject({
  type: z.literal("image"),
  data: z.string(),
  mimeType: z.string(),
});
export type WireImageBlock = z.infer<typeof wireImageBlockSchema>;

/** One block of `external_tool_call_response.result.content`. */
export const wireContentBlockSchema = z.discriminatedUnion("type", [wireTextBlockSchema, wireImageBlockSchema]);
/**
 * One block of a tool result, as the runtime keeps it: `{ type: "text", text }` or
 * `{ type: "image", data, mimeType }` (base64 `data`). Spelled out for the public types; the
 * schema above is still its definition (the check below fails to compile when they differ).
 */
export type WireContentBlock = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };
type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaAndTypeAgree: SameType<WireContentBlock, z.infer<typeof wireContentBlockSchema>> = true;
void schemaAndTypeAgree;

/** An inbound text part: `{ type: "text", text }` (other fields kept). */
export const inboundTextPartSchema = z.looseObject({
  type: z.literal("text"),
  text: z.string(),
});
export type InboundTextPart = z.infer<typeof inboundTextPartSchema>;

/** An inbound content part: a text part, or any other part with a string `type`. */
export const inboundContentPartSchema = keyedUnion("type", [inboundTextPartSchema]);
export type InboundContentPart = InboundTextPart | UnknownKeyed<"type">;

/** Inbound message content: a string or an array of parts. */
export const inboundContentSchema = z.union([z.string(), z.array(inboundContentPartSchema)]);
export type InboundContent = string | InboundContentPart[];

/** The text of inbound content: the string itself, or its text parts concatenated. */
export function inboundContentText(content: InboundContent): string {
  if (typeof content === "string") return content;
  const texts: string[] = [];
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
  }
  return texts.join("");
}
