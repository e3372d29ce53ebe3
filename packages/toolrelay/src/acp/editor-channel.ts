/**
 * An editor channel: the way the editor tools reach the editor's buffers. ACP
 * v1 offers the client methods `fs/read_text_file` and `fs/write_text_file`
 * (see acp-fs-channel.ts); ACP's v2 draft drops them in favour of MCP over ACP,
 * which would be another implementation of this interface. The tools, the
 * prompt bridge and the session never know which channel they use; the choice
 * is made in one place, editor-capabilities.ts.
 */

/** What the editor lets the agent do with its buffers. */
export interface EditorCapabilities {
  /** Read a buffer (unsaved changes included). */
  readTextFile: boolean;
  /** Replace a buffer's text. */
  writeTextFile: boolean;
}

/** Options of one editor request. */
export interface EditorRequestOptions {
  /**
   * The tool call's signal: when it fires, the editor request is cancelled
   * (the editor is told) and the returned promise rejects with the signal's
   * reason at once.
   */
  signal: AbortSignal;
}

/** How the editor tools reach the editor's buffers: ACP's `fs/*` methods, or a channel of your own. */
export interface EditorChannel {
  /** A short name for messages, e.g. `"ACP fs"`. */
  readonly name: string;
  /** What this channel can do; a tool is offered only when its capability is `true`. */
  readonly capabilities: Readonly<EditorCapabilities>;
  /**
   * The whole text of the buffer at `path` (an absolute path already checked
   * against the working roots). Rejects with an Error whose message the model
   * can read when the editor refuses, does not answer in time, or the call is
   * cancelled.
   */
  readTextFile(path: string, options: EditorRequestOptions): Promise<string>;
  /** Replace the buffer at `path` with `content`. Rejects like {@link EditorChannel.readTextFile}. */
  writeTextFile(path: string, content: string, options: EditorRequestOptions): Promise<void>;
}

/**
 * Why an editor request failed: the editor answered with an error
 * (`refused`: no such file, permission, ...) or did not answer before the
 * request's deadline (`timeout`). The message is written for the model.
 */
export class EditorRequestError extends Error {
  readonly kind: "refused" | "timeout";
  /** The editor's JSON-RPC error code, for `refused`. */
  readonly code: number | undefined;

  constructor(kind: "refused" | "timeout", message: string, code?: number) {
    super(message);
    this.name = "EditorRequestError";
    this.kind = kind;
    this.code = code;
  }
}
