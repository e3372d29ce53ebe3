/**
 * THE capability mapping, in one place: which editor channel serves a session,
 * and so which editor tools it gets.
 *
 * | editor advertises (`initialize`)      | channel    | tools offered        |
 * | ------------------------------------- | ---------- | -------------------- |
 * | `clientCapabilities.fs.readTextFile`  | ACP fs     | `read_editor_buffer` |
 * | `clientCapabilities.fs.writeTextFile` | ACP fs     | `write_via_editor`   |
 * | neither                               | none       | none                 |
 *
 * Adding a channel (ACP's v2 draft replaces the client `fs/*` methods with
 * MCP over ACP) means adding a row here and an {@link EditorChannel}
 * implementation; the tools, the prompt bridge and the session stay as they are.
 */
import type { AgentContext, ClientCapabilities } from "@agentclientprotocol/sdk";
import type { Timers } from "../internal/timers.js";
import { AcpFsChannel } from "./acp-fs-channel.js";
import type { EditorCapabilities, EditorChannel } from "./editor-channel.js";

/** The editor tools, and the capability each one needs. */
export const EDITOR_TOOL_CAPABILITY = Object.freeze({
  read_editor_buffer: "readTextFile",
  write_via_editor: "writeTextFile",
} as const satisfies Record<string, keyof EditorCapabilities>);

/** The name of an editor tool. */
export type EditorToolName = keyof typeof EDITOR_TOOL_CAPABILITY;

/** What the editor's `clientCapabilities` allow through the ACP v1 `fs/*` methods. Only a literal `true` counts. */
export function acpFsCapabilities(clientCapabilities: ClientCapabilities | undefined | null): EditorCapabilities {
  const fs = clientCapabilities?.fs;
  return { readTextFile: fs?.readTextFile === true, writeTextFile: fs?.writeTextFile === true };
}

/** Options of `editorChannelFor`: the ACP connection and what the editor said it can do. */
export interface EditorChannelForOptions {
  /** The agent-side context used to call the editor. */
  client: AgentContext;
  /** The ACP session. */
  sessionId: string;
  /** The `clientCapabilities` from the editor's `initialize`. */
  clientCapabilities: ClientCapabilities | undefined | null;
  /** Deadline of each editor request, in ms. Default 10_000. */
  requestTimeoutMs?: number | undefined;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers | undefined;
}

/** The channel to the editor's buffers for one session, or `undefined` when the editor offers none. */
export function editorChannelFor(options: EditorChannelForOptions): EditorChannel | undefined {
  const capabilities = acpFsCapabilities(options.clientCapabilities);
  if (capabilities.readTextFile || capabilities.writeTextFile) {
    return new AcpFsChannel({
      client: options.client,
      sessionId: options.sessionId,
      capabilities,
      requestTimeoutMs: options.requestTimeoutMs,
      timers: options.timers,
    });
  }
  return undefined;
}

/** The editor tools a channel supports, in a stable order. */
export function editorToolNames(channel: EditorChannel | undefined): EditorToolName[] {
  if (channel === undefined) return [];
  return (Object.keys(EDITOR_TOOL_CAPABILITY) as EditorToolName[]).filter((name) => channel.capabilities[EDITOR_TOOL_CAPABILITY[name]]);
}
