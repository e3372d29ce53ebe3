/**
 * The small shared pieces of the sidecar protocol's frame schemas: ids,
 * JSON objects, content blocks and annotations. The frames themselves are in
 * host-frames.ts (host → sidecar) and sidecar-frames.ts (sidecar → host).
 *
 * Field names of the protocol are snake_case. Two embedded objects keep MCP's
 * own names, so that a host can pass an MCP value through unchanged: tool
 * `annotations` (`readOnlyHint`, ...) and a tool result (`content` blocks with
 * `mimeType`, and `isError`).
 */
import { z } from "zod/v4";
import { isJsonObject, type JsonObject } from "../wire/json-object.js";

/**
 * The newest protocol version this sidecar speaks. Version 2 adds approvals (`needs_approval`,
 * `options.approvals`, `approval_request` / `approval_response` / `approval_cancel`); version 1 is
 * version 2 without them.
 */
export const SIDECAR_PROTOCOL_VERSION = 2;

/** Every protocol version this sidecar speaks, oldest first. A `hello` must offer one of them; the highest shared is chosen. */
export const SIDECAR_PROTOCOL_VERSIONS: readonly number[] = [1, 2];

/** The first protocol version with approvals. */
export const APPROVALS_PROTOCOL_VERSION = 2;

/** Largest frame body accepted by default: 16 MiB (`--max-frame-bytes`). */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Longest session, turn, call or approval id. */
export const MAX_ID_CHARS = 256;

/** A session, turn, call or approval id: 1–256 characters, chosen by the side that starts the thing. */
export const idSchema = z.string().min(1).max(MAX_ID_CHARS);

/**
 * A plain JSON object (checked by prototype, so a key named `constructor` is
 * fine). Its JSON Schema is `{ "type": "object" }`.
 */
export function jsonObject(description: string): z.ZodType<JsonObject> {
  return z.custom<JsonObject>(isJsonObject, { message: "Invalid input: expected a JSON object" }).meta({ type: "object", description });
}

/** A text block: `{ type: "text", text }`. */
export const textBlockSchema = z.strictObject({ type: z.literal("text"), text: z.string() });

/** An image block: `{ type: "image", data: <base64>, mimeType: "image/png" }`. */
export const imageBlockSchema = z.strictObject({
  type: z.literal("image"),
  data: z.string().min(1).meta({ description: "base64" }),
  mimeType: z.string().regex(/^image\//),
});

/** A content block of a tool result (MCP's names). */
export const contentBlockSchema = z.discriminatedUnion("type", [textBlockSchema, imageBlockSchema]);
export type SidecarContentBlock = z.infer<typeof contentBlockSchema>;

/** What a tool says about itself (MCP's names and meanings; see docs/tools.md). */
export const annotationsSchema = z.strictObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});
export type SidecarToolAnnotations = z.infer<typeof annotationsSchema>;

/** Why the sidecar stopped waiting for the host's answer to a call. */
export const cancelReasonSchema = z.enum(["timeout", "cancelled", "disconnected"]);
export type SidecarCancelReason = z.infer<typeof cancelReasonSchema>;
