/**
 * The editor tools: client tools whose callbacks run in the ACP agent's
 * process and reach the user's editor through an {@link EditorChannel}.
 *
 * - `read_editor_buffer` reads a buffer — unsaved edits included — and shows
 *   it with a content hash of the whole buffer.
 * - `write_via_editor` replaces a buffer. With `expected_hash` it first reads
 *   the buffer again and refuses, writing nothing, when the hash differs: the
 *   user (or anything else) changed it since the model read it. It changes the
 *   user's files, so it asks first (`needsApproval`: the session's `canUseTool`,
 *   in an ACP agent the editor's `session/request_permission`) unless
 *   {@link EditorToolsOptions.writeNeedsApproval} says the user already agreed.
 *   `read_editor_buffer` changes nothing and never asks.
 *
 * Paths are validated in the input schema (a zod transform that runs
 * {@link WorkingRoots.check}), so a relative path, `..` out of the roots, a
 * sibling such as `root-evil/`, a NUL or a symbolic link out of the roots is an
 * `invalid-input` outcome — the callback never runs, and the model reads which
 * argument failed and why. Failures of the editor itself (refused, no answer in
 * time) are `tool-error` outcomes.
 *
 * `read_editor_buffer` reads the whole buffer in one `fs/read_text_file`
 * request and applies `line` / `limit` here, so the hash and the lines shown
 * come from the same snapshot.
 */
import { z } from "zod/v4";
import { defineTool, errorResult, type ClientTool } from "../tools/index.js";
import { bufferHash, countLines, hashMatches, sliceLines } from "./editor-buffer.js";
import { EditorRequestError, type EditorChannel } from "./editor-channel.js";
import { editorToolNames } from "./editor-capabilities.js";
import type { WorkingRoots } from "./working-roots.js";

/** Options of `createEditorTools`. */
export interface EditorToolsOptions {
  /** How the tools reach the editor (see `editorChannelFor`). `undefined`: no editor tools. */
  channel: EditorChannel | undefined;
  /** The session's working roots: every path must be inside one. */
  roots: WorkingRoots;
  /**
   * Refuse a `write_via_editor` without `expected_hash` when the buffer exists
   * and is not empty (needs the read capability). Default `false`: without a
   * hash the buffer is overwritten.
   */
  requireExpectedHash?: boolean | undefined;
  /** Deadline of one editor tool call, in ms. Default: the session's `toolTimeoutMs`. */
  toolTimeoutMs?: number | undefined;
  /**
   * Whether a `write_via_editor` call asks before it writes (its `needsApproval`); a function is
   * asked at each call. `startAcpAgent` passes "not in the `acceptEdits` or `unrestricted` mode",
   * the modes in which the runtime's own Write runs unasked. Default `true`.
   */
  writeNeedsApproval?: boolean | (() => boolean) | undefined;
}

/** The editor tools the channel supports (none without a channel). */
export function createEditorTools(options: EditorToolsOptions): ClientTool[] {
  const names = editorToolNames(options.channel);
  const tools: ClientTool[] = [];
  if (names.includes("read_editor_buffer")) tools.push(readEditorBuffer(options));
  if (names.includes("write_via_editor")) tools.push(writeViaEditor(options));
  return tools;
}

/** The path argument: checked and normalized by the working roots. */
function pathSchema(roots: WorkingRoots) {
  return z
    .string()
    .describe(`Absolute path of the file, inside the workspace (${roots.describe()}).`)
    .transform((value, context) => {
      const checked = roots.check(value);
      if (checked.ok) return checked.path;
      context.addIssue({ code: "custom", message: checked.reason });
      return z.NEVER;
    });
}

function readEditorBuffer(options: EditorToolsOptions): ClientTool {
  const channel = options.channel!;
  return defineTool({
    name: "read_editor_buffer",
    description:
      "Read a text file through the user's editor, including unsaved changes in its open buffers (prefer this over reading " +
      "from disk). Returns the text and a hash of the whole buffer; pass that hash as expected_hash to write_via_editor. " +
      `Paths must be absolute and inside the workspace (${options.roots.describe()}).`,
    inputSchema: z.object({
      path: pathSchema(options.roots),
      line: z.number().int().min(1).optional().describe("First line to show, 1-based. Default 1."),
      limit: z.number().int().min(1).optional().describe("Most lines to show. Default: to the end of the buffer."),
    }),
    annotations: { title: "Read editor buffer", readOnlyHint: true, openWorldHint: false },
    ...(options.toolTimeoutMs !== undefined ? { timeoutMs: options.toolTimeoutMs } : {}),
    async execute({ path, line, limit }, { signal }) {
      const text = await channel.readTextFile(path, { signal });
      const hash = bufferHash(text);
      const slice = sliceLines(text, line, limit);
      const range = slice.endLine >= slice.startLine ? `${slice.startLine}-${slice.endLine}` : "none";
      const note =
        slice.totalLines === 0
          ? "The buffer is empty."
          : slice.endLine < slice.startLine
            ? `Line ${slice.startLine} is past the end of the buffer (${slice.totalLines} lines).`
            : undefined;
      return [
        `<editor_buffer path="${path}" hash="${hash}" lines="${range}" total_lines="${slice.totalLines}">`,
        slice.text.endsWith("\n") || slice.text === "" ? `${slice.text}</editor_buffer>` : `${slice.text}\n</editor_buffer>`,
        ...(note ? [note] : []),
        `The hash covers the whole buffer. To change this file, call write_via_editor with expected_hash "${hash}".`,
      ].join("\n");
    },
  });
}

function writeViaEditor(options: EditorToolsOptions): ClientTool {
  const channel = options.channel!;
  const canRead = channel.capabilities.readTextFile;
  const needsApproval = options.writeNeedsApproval ?? true;
  return defineTool({
    name: "write_via_editor",
    description:
      "Replace the whole text of a file through the user's editor: the change lands in the editor's buffer, the editor " +
      "saves it. Pass expected_hash (from read_editor_buffer) so that the write is refused when the user changed the " +
      "buffer since you read it; without it, the buffer is overwritten, unsaved edits included. " +
      `Paths must be absolute and inside the workspace (${options.roots.describe()}).`,
    inputSchema: z.object({
      path: pathSchema(options.roots),
      content: z.string().describe("The new, complete text of the file."),
      expected_hash: z
        .string()
        .regex(/^[0-9a-fA-F]{16,64}$/, "expected_hash must be the hash read_editor_buffer returned (16 hex characters)")
        .optional()
        .describe("The hash read_editor_buffer returned for this file. The write is refused if the buffer changed since."),
    }),
    annotations: { title: "Write through editor", destructiveHint: true, openWorldHint: false },
    needsApproval: typeof needsApproval === "function" ? () => needsApproval() : needsApproval,
    ...(options.toolTimeoutMs !== undefined ? { timeoutMs: options.toolTimeoutMs } : {}),
    async execute({ path, content, expected_hash: expected }, { signal }) {
      if (expected !== undefined) {
        if (!canRead) {
          return errorResult(
            "Nothing was written: expected_hash cannot be checked because the editor does not let the agent read buffers. " +
              `Call write_via_editor again without expected_hash to overwrite ${path}.`,
          );
        }
        let current: string;
        try {
          current = await channel.readTextFile(path, { signal });
        } catch (error) {
          if (signal.aborted) throw error;
          throw new Error(
            `Nothing was written: the buffer of ${path} could not be read to compare it with expected_hash. ${errorMessage(error)}`,
          );
        }
        if (!hashMatches(expected, current)) {
          return errorResult(
            `Nothing was written: the buffer of ${path} changed since you read it (its hash is now ${bufferHash(current)}, ` +
              `you expected ${expected.toLowerCase()}). Read it again with read_editor_buffer, then redo your change on the new text.`,
          );
        }
      } else if (options.requireExpectedHash === true && canRead) {
        let current: string | undefined;
        try {
          current = await channel.readTextFile(path, { signal });
        } catch (error) {
          // The editor refused to read it: a new file. Anything else (no answer, cancelled) stops the write.
          if (!(error instanceof EditorRequestError && error.kind === "refused") || signal.aborted) throw error;
        }
        if (current !== undefined && current !== "") {
          return errorResult(
            `Nothing was written: ${path} already has content in the editor. Read it with read_editor_buffer first and ` +
              "pass the hash it returns as expected_hash, so that unsaved edits are never overwritten.",
          );
        }
      }
      await channel.writeTextFile(path, content, { signal });
      return `Wrote ${content.length} characters (${countLines(content)} lines) to ${path} through the editor. Its hash is now ${bufferHash(content)}.`;
    },
  });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
