/**
 * `SessionDispatcher`: what the sidecar does with each checked host frame
 * (shutdown aside, which ends the sidecar). It answers `hello` (the intake
 * refuses every other frame before it, see host-frame-intake.ts), holds the
 * sessions by the host's ids — the open ones and the ones still opening — and
 * routes `open_session`, `send`, `abort`, `close_session` and the tool and
 * approval answers to them. A frame it cannot use is answered with an `error`
 * frame (`hello_repeated`, `unsupported_version`, `session_exists`,
 * `unknown_session`, `turn_exists`, `unknown_call`, `unknown_approval`, or the
 * SDK's code when a session cannot open). A tool answer is matched to its call
 * first: an answer to a call the sidecar cancelled is late and ignored, also
 * once its session is closed; an answer to no call gets `unknown_session` when
 * its session is not open, else `unknown_call`. An approval answer likewise:
 * late (after `approval_cancel`) is ignored; one for no waiting approval of its
 * session — never asked, answered already, or another session's — gets
 * `unknown_session` when its session is not open, else `unknown_approval`.
 */
import { isToolrelayError } from "../errors.js";
import type { Diagnostics } from "./diagnostics.js";
import type { SidecarEncoding } from "./frame-encoding.js";
import type { ApprovalAnswerDisposition, HostApprovals } from "./host-approvals.js";
import type { HostCalls } from "./host-calls.js";
import type { ApprovalResponseFrame, HostFrame, OpenSessionFrame } from "./host-frames.js";
import { SIDECAR_PROTOCOL_VERSIONS } from "./protocol-values.js";
import { errorFrame, type ErrorFrameAbout, type SidecarFrame } from "./sidecar-frames.js";
import { SidecarSession } from "./sidecar-session.js";
import { SIDECAR_VERSION } from "./sidecar-version.js";

export interface SessionDispatcherOptions {
  /** Write a frame to the host. */
  send: (frame: SidecarFrame) => void;
  /** The calls waiting for the host's answers. */
  hostCalls: HostCalls;
  /** The approvals waiting for the host's answers. */
  hostApprovals: HostApprovals;
  diagnostics: Diagnostics;
  /** The body encoding, told in `welcome`. */
  encoding: SidecarEncoding;
  /** The frame limit, told in `welcome`; a session's tool input must fit in half of it. */
  maxFrameBytes: number;
  /** Whether the sidecar is stopping: a session that finishes opening then is closed at once. */
  stopping: () => boolean;
}

/** A checked host frame the dispatcher takes. */
export type DispatchedHostFrame = Exclude<HostFrame, { type: "shutdown" }>;

export class SessionDispatcher {
  #options: SessionDispatcherOptions;
  #greeted = false;
  /** The protocol version agreed in `hello` / `welcome`. */
  #version = 0;
  #sessions = new Map<string, SidecarSession>();
  /** Sessions still opening, by id: their open promise. */
  #opening = new Map<string, Promise<SidecarSession | undefined>>();

  constructor(options: SessionDispatcherOptions) {
    this.#options = options;
  }

  /** Sessions open now. */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** Whether the host's `hello` was answered: until then only `hello` and `shutdown` reach {@link handle}. */
  get greeted(): boolean {
    return this.#greeted;
  }

  /** Sessions still opening. */
  get openingCount(): number {
    return this.#opening.size;
  }

  /** Handle one checked frame, in arrival order (after `hello`, but `hello` itself). */
  handle(frame: DispatchedHostFrame): void {
    if (frame.type === "hello") {
      this.#hello(frame);
      return;
    }
    this.#dispatch(frame);
  }

  /**
   * Close every session, the open ones and those still opening. On `shutdown`
   * each open one is announced (`session_closed`, reason `shutdown`) once closed.
   * Resolves when all are closed.
   */
  closeAll(reason: "shutdown" | "host_gone"): Promise<unknown> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    return Promise.all([
      ...sessions.map(async (session) => {
        await session.close();
        if (reason === "shutdown") this.#options.send({ type: "session_closed", session: session.id, reason: "shutdown" });
      }),
      ...[...this.#opening.values()].map(async (opening) => (await opening)?.close()),
    ]);
  }

  #error(code: string, message: string, about?: ErrorFrameAbout): void {
    this.#options.send(errorFrame(code, message, about));
  }

  #hello(frame: Extract<HostFrame, { type: "hello" }>): void {
    if (this.#greeted) {
      this.#error("hello_repeated", "hello was already answered", { frame_type: "hello" });
      return;
    }
    const shared = frame.versions.filter((version) => SIDECAR_PROTOCOL_VERSIONS.includes(version));
    if (shared.length === 0) {
      this.#error(
        "unsupported_version",
        `this sidecar speaks protocol versions ${SIDECAR_PROTOCOL_VERSIONS.join(", ")}; the host offered ${frame.versions.join(", ")}`,
        { frame_type: "hello" },
      );
      return;
    }
    this.#greeted = true;
    this.#version = Math.max(...shared);
    this.#options.send({
      type: "welcome",
      version: this.#version,
      sidecar: { name: "toolrelay-sidecar", version: SIDECAR_VERSION },
      encoding: this.#options.encoding,
      max_frame_bytes: this.#options.maxFrameBytes,
    });
  }

  #dispatch(frame: Exclude<HostFrame, { type: "hello" | "shutdown" }>): void {
    switch (frame.type) {
      case "open_session":
        this.#open(frame);
        return;
      case "tool_result":
      case "tool_error": {
        const answer =
          frame.type === "tool_result"
            ? { kind: "result" as const, result: { content: frame.content, isError: frame.isError ?? false } }
            : { kind: "error" as const, message: frame.message };
        const disposition = this.#options.hostCalls.answer(frame.session, frame.call, answer);
        if (disposition === "late") this.#options.diagnostics.log("late-answer", { session: frame.session, call: frame.call });
        if (disposition !== "unknown") return;
        if (!this.#sessions.has(frame.session)) {
          this.#unknownSession(frame.type, frame.session, { call: frame.call });
          return;
        }
        this.#error("unknown_call", `no call ${frame.call} is waiting in session ${frame.session}`, {
          frame_type: frame.type,
          session: frame.session,
          call: frame.call,
        });
        return;
      }
    }
    if (frame.type === "approval_response") {
      this.#approvalResponse(frame);
      return;
    }
    const session = this.#sessions.get(frame.session);
    if (session === undefined) {
      this.#unknownSession(frame.type, frame.session, { turn: "turn" in frame ? (frame.turn ?? null) : null });
      return;
    }
    switch (frame.type) {
      case "send":
        if (session.runningTurn === frame.turn) {
          this.#error("turn_exists", `turn ${frame.turn} is running; give each turn a new id`, {
            frame_type: "send",
            session: frame.session,
            turn: frame.turn,
          });
          return;
        }
        session.send(frame);
        return;
      case "abort":
        if (!session.abort(frame.turn)) this.#options.diagnostics.log("abort-nothing", { session: frame.session, turn: frame.turn });
        return;
      case "close_session":
        this.#sessions.delete(frame.session);
        void session.close().then(() => this.#options.send({ type: "session_closed", session: frame.session, reason: "closed" }));
        return;
    }
  }

  /** The host's answer to an approval: settles it, is ignored (late), or gets an error frame naming why it was not used. */
  #approvalResponse(frame: ApprovalResponseFrame): void {
    const { session, approval } = frame;
    const answer = {
      allow: frame.allow,
      ...(frame.message === undefined ? {} : { message: frame.message }),
      ...(frame.updated_input === undefined ? {} : { updated_input: frame.updated_input }),
    };
    const disposition: ApprovalAnswerDisposition = this.#options.hostApprovals.answer(session, approval, answer);
    if (disposition === "answered") return;
    if (disposition === "late") return void this.#options.diagnostics.log("late-approval", { session, approval });
    if (!this.#sessions.has(session)) return void this.#unknownSession("approval_response", session, { approval });
    const why =
      disposition === "repeated"
        ? `approval ${approval} of session ${session} was answered already; the first answer stands`
        : disposition === "other-session"
          ? `approval ${approval} is not of session ${session}; answer it with the session of its approval_request`
          : `no approval ${approval} is waiting in session ${session}`;
    this.#error("unknown_approval", why, { frame_type: "approval_response", session, approval });
  }

  /** `unknown_session` for a frame addressed to a session that is not open (or still opening). */
  #unknownSession(frameType: string, session: string, about: Pick<ErrorFrameAbout, "turn" | "call" | "approval">): void {
    const why = this.#opening.has(session) ? "is still opening: wait for session_opened" : "is not open";
    this.#error("unknown_session", `session ${session} ${why}`, { frame_type: frameType, session, ...about });
  }

  #open(frame: OpenSessionFrame): void {
    const { send, diagnostics } = this.#options;
    const id = frame.session;
    if (this.#sessions.has(id) || this.#opening.has(id)) {
      this.#error("session_exists", `session ${id} is already open`, { frame_type: "open_session", session: id });
      return;
    }
    const opening = SidecarSession.open(frame, {
      send,
      hostCalls: this.#options.hostCalls,
      hostApprovals: this.#options.hostApprovals,
      version: this.#version,
      diagnostics,
      maxInputBytes: Math.min(1_048_576, Math.floor(this.#options.maxFrameBytes / 2)),
      onLinkClosed: (session) => {
        if (this.#sessions.get(session.id) !== session) return;
        this.#sessions.delete(session.id);
        void session.close().then(() => send({ type: "session_closed", session: session.id, reason: "link_closed" }));
      },
    }).then(
      (session) => {
        this.#opening.delete(id);
        if (this.#options.stopping()) {
          void session.close();
          return undefined;
        }
        this.#sessions.set(id, session);
        diagnostics.log("session-opened", { session: id, tools: frame.tools.length });
        send({
          type: "session_opened",
          session: id,
          agent_id: session.agentId,
          conversation_id: session.conversationId,
          tools: frame.tools.map((tool) => tool.name),
        });
        return session;
      },
      (error: unknown) => {
        this.#opening.delete(id);
        const code = isToolrelayError(error) ? error.code.toLowerCase() : "internal";
        diagnostics.log("session-open-failed", { session: id, code });
        this.#error(code, error instanceof Error ? error.message : String(error), { frame_type: "open_session", session: id });
        return undefined;
      },
    );
    this.#opening.set(id, opening);
  }
}
