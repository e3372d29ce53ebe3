/**
 * `startSidecar`: toolrelay over two byte streams. Frames from the host come
 * in on `input`, frames to the host go out on `output` (and nothing else
 * does); every frame is handled in the order it arrived. The sidecar holds
 * the sessions by the host's ids, answers every frame it cannot use with an
 * `error` frame and goes on, and ends in one of two ways: the host's
 * `shutdown` (sessions closed, `goodbye`), or the host's disappearance (the
 * input ends or the output breaks): every session is closed at once — its
 * pending calls answered to the runtime as cancelled — within `closeDeadlineMs`.
 */
import type { Readable, Writable } from "node:stream";
import { isToolrelayError } from "../errors.js";
import { systemTimers, type TimerHandle, type Timers } from "../internal/timers.js";
import { formatIssues } from "../wire/format-issues.js";
import { createDiagnostics, type Diagnostics } from "./diagnostics.js";
import { bodyCodec, type SidecarEncoding } from "./frame-encoding.js";
import { FrameReader, type FrameReading } from "./frame-reader.js";
import { FrameWriter, idsOf } from "./frame-writer.js";
import { HostCalls } from "./host-calls.js";
import { hostFrameSchemas, type HostFrame, type HostFrameType, type OpenSessionFrame } from "./host-frames.js";
import { DEFAULT_MAX_FRAME_BYTES, SIDECAR_PROTOCOL_VERSION } from "./protocol-values.js";
import type { SidecarFrame } from "./sidecar-frames.js";
import { SidecarSession } from "./sidecar-session.js";
import { SIDECAR_VERSION } from "./sidecar-version.js";

export interface SidecarOptions {
  /** Frames from the host (the process's stdin). Required. */
  input: Readable;
  /** Frames to the host (the process's stdout). Nothing else is ever written to it. Required. */
  output: Writable;
  /** How frame bodies are encoded. Default `"json"`. */
  encoding?: SidecarEncoding;
  /** Largest frame body accepted, in bytes; a larger one gets a `frame_too_large` error and is skipped. Default 16 MiB (16_777_216). */
  maxFrameBytes?: number;
  /** Where diagnostics lines go (ids, types, sizes, codes — never payloads). Default: nowhere. */
  debug?: (line: string) => void;
  /** How long the sessions may take to close when the host is gone, in ms. Default 800 (the sidecar is gone within 1 s). */
  closeDeadlineMs?: number;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers;
}

/** Why the sidecar stopped: the host's `shutdown`, or the host went away (input ended, output broke). */
export interface SidecarExit {
  /** `shutdown`: the host's `shutdown` frame; `host_gone`: the input ended, the output broke, or `stop()`. */
  reason: "shutdown" | "host_gone";
}

/** A running sidecar. */
export interface Sidecar {
  /** Resolves once the sidecar stopped and its sessions are closed (or were given up on after `closeDeadlineMs`). */
  readonly done: Promise<SidecarExit>;
  /** Sessions open now. */
  readonly sessionCount: number;
  /** Stop as if the host had gone away. */
  stop(): Promise<SidecarExit>;
}

/** Start a sidecar on `input`/`output`. */
export function startSidecar(options: SidecarOptions): Sidecar {
  return new SidecarCore(options);
}

class SidecarCore implements Sidecar {
  readonly done: Promise<SidecarExit>;
  #resolveDone!: (exit: SidecarExit) => void;
  #options: SidecarOptions;
  #timers: Timers;
  #diagnostics: Diagnostics;
  #reader: FrameReader;
  #codec;
  #writer: FrameWriter;
  #hostCalls: HostCalls;
  #greeted = false;
  #sessions = new Map<string, SidecarSession>();
  /** Sessions still opening, by id: their open promise. */
  #opening = new Map<string, Promise<SidecarSession | undefined>>();
  #stopping: Promise<SidecarExit> | undefined;
  #onData = (chunk: Buffer): void => this.#onChunk(chunk);
  #onEnd = (): void => void this.#stop("host_gone");

  constructor(options: SidecarOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#diagnostics = createDiagnostics(options.debug);
    const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.#reader = new FrameReader(maxFrameBytes);
    this.#codec = bodyCodec(options.encoding ?? "json");
    this.#writer = new FrameWriter({
      output: options.output,
      codec: this.#codec,
      maxFrameBytes,
      diagnostics: this.#diagnostics,
      onGone: () => void this.#stop("host_gone"),
    });
    this.#hostCalls = new HostCalls((frame) => this.#send(frame));
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
    options.input.on("data", this.#onData);
    options.input.on("end", this.#onEnd);
    options.input.on("close", this.#onEnd);
    options.input.on("error", this.#onEnd);
    this.#diagnostics.log("start", { version: SIDECAR_VERSION, encoding: this.#codec.encoding, max_frame_bytes: maxFrameBytes });
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  stop(): Promise<SidecarExit> {
    return this.#stop("host_gone");
  }

  #send(frame: SidecarFrame): void {
    this.#writer.write(frame);
  }

  #error(
    code: string,
    message: string,
    about: { frame_type?: string | null; session?: string | null; turn?: string | null; call?: string | null } = {},
  ): void {
    this.#send({
      type: "error",
      code,
      message,
      frame_type: about.frame_type ?? null,
      session: about.session ?? null,
      turn: about.turn ?? null,
      call: about.call ?? null,
    });
  }

  #onChunk(chunk: Buffer): void {
    let readings: FrameReading[];
    try {
      readings = this.#reader.push(chunk);
    } catch {
      return;
    }
    for (const reading of readings) {
      if (reading.kind === "too-large") {
        this.#diagnostics.log("frame-too-large", { bytes: reading.bytes, limit: this.#reader.maxFrameBytes });
        this.#error(
          "frame_too_large",
          `a frame of ${reading.bytes} bytes is over the limit of ${this.#reader.maxFrameBytes} bytes; it was skipped`,
        );
        continue;
      }
      this.#onBody(reading.body);
    }
  }

  #onBody(body: Uint8Array): void {
    const decoded = this.#codec.decode(body);
    if (!decoded.ok) {
      this.#diagnostics.log("malformed-frame", { bytes: body.length });
      this.#error("malformed_frame", `the frame could not be decoded as ${this.#codec.encoding}: ${decoded.error}`);
      return;
    }
    const raw = decoded.value;
    const type = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as { type?: unknown }).type : undefined;
    if (typeof type !== "string") {
      this.#diagnostics.log("malformed-frame", { bytes: body.length });
      this.#error("malformed_frame", 'a frame must be an object with a string "type"');
      return;
    }
    const ids = idsOf(raw as object);
    if (this.#diagnostics.enabled) this.#diagnostics.log("<-", { type, ...ids, bytes: body.length });
    if (!Object.hasOwn(hostFrameSchemas, type)) {
      this.#error(
        "unknown_frame_type",
        `unknown frame type ${JSON.stringify(type.slice(0, 64))}; this sidecar speaks protocol version ${SIDECAR_PROTOCOL_VERSION}`,
        { frame_type: null, ...ids },
      );
      return;
    }
    const schema = hostFrameSchemas[type as HostFrameType];
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      this.#invalid(type, ids, formatIssues(parsed.error.issues));
      return;
    }
    const frame = parsed.data as HostFrame;
    if (this.#stopping !== undefined) {
      this.#error("shutting_down", "the sidecar is shutting down", { frame_type: type, ...ids });
      return;
    }
    if (frame.type === "shutdown") return void this.#stop("shutdown");
    if (frame.type === "hello") {
      this.#hello(frame);
      return;
    }
    if (!this.#greeted) {
      this.#error("hello_required", "the first frame must be hello", { frame_type: type, ...ids });
      return;
    }
    this.#dispatch(frame);
  }

  /** A known frame with a bad shape. A tool answer of a waiting call also settles the call (as a tool error), so nothing hangs. */
  #invalid(type: string, ids: { session?: string; turn?: string; call?: string }, issues: string): void {
    this.#error("invalid_frame", `invalid ${type} frame: ${issues}`, { frame_type: type, ...ids });
    if ((type === "tool_result" || type === "tool_error") && ids.session !== undefined && ids.call !== undefined) {
      this.#hostCalls.answer(ids.session, ids.call, { kind: "error", message: `the host sent an invalid ${type} (${issues})` });
    }
  }

  #hello(frame: Extract<HostFrame, { type: "hello" }>): void {
    if (this.#greeted) {
      this.#error("hello_repeated", "hello was already answered", { frame_type: "hello" });
      return;
    }
    if (!frame.versions.includes(SIDECAR_PROTOCOL_VERSION)) {
      this.#error(
        "unsupported_version",
        `this sidecar speaks protocol version ${SIDECAR_PROTOCOL_VERSION}; the host offered ${frame.versions.join(", ")}`,
        { frame_type: "hello" },
      );
      return;
    }
    this.#greeted = true;
    this.#send({
      type: "welcome",
      version: SIDECAR_PROTOCOL_VERSION,
      sidecar: { name: "toolrelay-sidecar", version: SIDECAR_VERSION },
      encoding: this.#codec.encoding,
      max_frame_bytes: this.#reader.maxFrameBytes,
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
        const disposition = this.#hostCalls.answer(frame.session, frame.call, answer);
        if (disposition === "late") this.#diagnostics.log("late-answer", { session: frame.session, call: frame.call });
        if (disposition === "unknown")
          this.#error("unknown_call", `no call ${frame.call} is waiting in session ${frame.session}`, {
            frame_type: frame.type,
            session: frame.session,
            call: frame.call,
          });
        return;
      }
    }
    const session = this.#sessions.get(frame.session);
    if (session === undefined) {
      const why = this.#opening.has(frame.session) ? "is still opening: wait for session_opened" : "is not open";
      this.#error("unknown_session", `session ${frame.session} ${why}`, {
        frame_type: frame.type,
        session: frame.session,
        turn: "turn" in frame ? frame.turn : null,
      });
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
        if (!session.abort(frame.turn)) this.#diagnostics.log("abort-nothing", { session: frame.session, turn: frame.turn });
        return;
      case "close_session":
        this.#sessions.delete(frame.session);
        void session.close().then(() => this.#send({ type: "session_closed", session: frame.session, reason: "closed" }));
        return;
    }
  }

  #open(frame: OpenSessionFrame): void {
    const id = frame.session;
    if (this.#sessions.has(id) || this.#opening.has(id)) {
      this.#error("session_exists", `session ${id} is already open`, { frame_type: "open_session", session: id });
      return;
    }
    const opening = SidecarSession.open(frame, {
      send: (out) => this.#send(out),
      hostCalls: this.#hostCalls,
      diagnostics: this.#diagnostics,
      maxInputBytes: Math.min(1_048_576, Math.floor(this.#reader.maxFrameBytes / 2)),
      onLinkClosed: (session) => {
        if (this.#sessions.get(session.id) !== session) return;
        this.#sessions.delete(session.id);
        void session.close().then(() => this.#send({ type: "session_closed", session: session.id, reason: "link_closed" }));
      },
    }).then(
      (session) => {
        this.#opening.delete(id);
        if (this.#stopping !== undefined) {
          void session.close();
          return undefined;
        }
        this.#sessions.set(id, session);
        this.#diagnostics.log("session-opened", { session: id, tools: frame.tools.length });
        this.#send({
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
        this.#diagnostics.log("session-open-failed", { session: id, code });
        this.#error(code, error instanceof Error ? error.message : String(error), { frame_type: "open_session", session: id });
        return undefined;
      },
    );
    this.#opening.set(id, opening);
  }

  #stop(reason: SidecarExit["reason"]): Promise<SidecarExit> {
    this.#stopping ??= this.#shutDown(reason);
    return this.#stopping;
  }

  async #shutDown(reason: SidecarExit["reason"]): Promise<SidecarExit> {
    this.#diagnostics.log("stop", {
      reason,
      sessions: this.#sessions.size,
      opening: this.#opening.size,
      pending_calls: this.#hostCalls.pendingCount,
    });
    const input = this.#options.input;
    input.off("data", this.#onData);
    if (this.#reader.midFrame) this.#diagnostics.log("truncated-frame");
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    const closing = Promise.all([
      ...sessions.map(async (session) => {
        await session.close();
        if (reason === "shutdown") this.#send({ type: "session_closed", session: session.id, reason: "shutdown" });
      }),
      ...[...this.#opening.values()].map(async (opening) => (await opening)?.close()),
    ]);
    if (reason === "host_gone") {
      // Nobody will answer: the calls are settled now, not at their deadlines.
      this.#hostCalls.abandon("the host is gone");
      await this.#withDeadline(closing, this.#options.closeDeadlineMs ?? 800);
    } else {
      await closing;
      this.#send({ type: "goodbye" });
      await this.#writer.end();
    }
    input.off("end", this.#onEnd);
    input.off("close", this.#onEnd);
    this.#diagnostics.log("stopped", { reason });
    const exit = { reason };
    this.#resolveDone(exit);
    return exit;
  }

  async #withDeadline(work: Promise<unknown>, deadlineMs: number): Promise<void> {
    let timer: TimerHandle | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = this.#timers.setTimeout(() => {
        this.#diagnostics.log("close-deadline-passed", { deadline_ms: deadlineMs });
        resolve();
      }, deadlineMs);
    });
    try {
      await Promise.race([
        work.then(
          () => undefined,
          () => undefined,
        ),
        deadline,
      ]);
    } finally {
      if (timer !== undefined) this.#timers.clearTimeout(timer);
    }
  }
}
