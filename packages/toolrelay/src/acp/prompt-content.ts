/**
 * ACP prompt content → the user message of a toolrelay turn. Text stays text;
 * resource links and embedded text resources become text the model can read
 * (the agent advertises `embeddedContext`); images become letta image parts.
 * Audio and binary resources are named, not sent.
 */
import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { MessageInput } from "../session/session.js";

type MessagePart = Exclude<MessageInput, string>[number];

/** The user message for `prompt`. A single text block becomes a plain string. */
export function messageFromPrompt(prompt: readonly ContentBlock[]): MessageInput {
  const parts: MessagePart[] = prompt.flatMap((block): MessagePart[] => {
    switch (block.type) {
      case "text":
        return [{ type: "text", text: block.text }];
      case "resource_link":
        return [{ type: "text", text: `[${block.title ?? block.name}](${block.uri})` }];
      case "resource": {
        const resource = block.resource as { uri: string; text?: string | undefined; mimeType?: string | null | undefined };
        if (typeof resource.text === "string") {
          return [{ type: "text", text: `<resource uri="${resource.uri}">\n${resource.text}\n</resource>` }];
        }
        return [{ type: "text", text: `[binary resource ${resource.uri} not included]` }];
      }
      case "image":
        return [{ type: "image", source: { type: "base64", media_type: block.mimeType, data: block.data } }];
      case "audio":
        return [{ type: "text", text: "[audio not included]" }];
      default:
        return [];
    }
  });
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.type === "text") return only.text;
  if (parts.length === 0) return "";
  return parts;
}
