/**
 * `startSidecar`: toolrelay over two byte streams. Frames from the host come
 * in on `input`, frames to the host go out on `output` (and nothing else
 * does); every frame is handled in the order it arrived. The sidecar holds
 * the sessions by the host's ids, answers every frame it cannot use with an
 * `error` frame and goes on, and ends in one of two ways: the host's
 * `shutdown` (sessions closed, `goodbye`), or the host's disappearance (the
 * input ends or the output breaks): every session is closed at once — its
 * pending calls answered to the runtime as cancelled — within `closeDeadlineMs`.
 *
 * The parts: `HostFrameIntake` turns the input into checked frames,
 * `SessionDispatcher` holds the sessions and routes the frames to them, and
 * this file starts the sidecar and shuts it down.
 */
import type { Readable, Writable } from "node:stream";
import { systemTimers, type TimerHandle, type Timers } from "../internal/timers.js";
import { createDiagnostics, type Diagnostics } from "./diagnostics.js";
import { bodyCodec, type SidecarEncoding } from "./frame-encoding.js";
import { FrameReader } from "./frame-reader.js";
import { FrameWriter } from "./frame-writer.js";
import { HostApprovals } from "./host-approvals.js";
import { HostCalls } from "./host-calls.js";
import { HostFrameIntake, type HostFrameIds } from "./host-frame-intake.js";
import type { HostFrame } from "./host-frames.js";
import { DEFAULT_MAX_FRAME_BYTES } from "./protocol-values.js";
import { errorFrame, type SidecarFrame } from "./sidecar-frames.js";
import { SessionDispatcher } from "./session-dispatcher.js";
import { SIDECAR_VERSION } from "./sidecar-version.js";

/** The streams and settings of {@link startSidecar} (the `toolrelay-sidecar` executable passes its stdin, stdout and flags). */
export interface SidecarOptions {
  /** Frames from the host (the process's stdin). Required. */
  input: Readable;
  /** Frames to the host (the process's stdout). Nothing else is ever written to it. Required. */
  output: Writable;
  /** How frame bodies are encoded. Default `"json"`. */
  encoding?: SidecarEncoding | undefined;
  /** Largest frame body accepted, in bytes; a larger one gets a `frame_too_large` error and is skipped. Default 16 MiB (16_777_216). */
  maxFrameBytes?: number | undefined;
  /** Where diagnostics lines go (ids, types, sizes, codes — never payloads). Default: nowhere. */
  debug?: ((line: string) => void) | undefined;
  /** How long the sessions may take to close when the host is gone, in ms. Default 800 (the sidecar is gone within 1 s). */
  closeDeadlineMs?: number | undefined;
  /** Timers (inject fake ones in tests). Default: the global timers. */
  timers?: Timers | undefined;
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
  #intake: HostFrameIntake;
  #writer: FrameWriter;
  #hostCalls: HostCalls;
  #hostApprovals: HostApprovals;
  #dispatcher: SessionDispatcher;
  #stopping: Promise<SidecarExit> | undefined;
  #onData = (chunk: Buffer): void => this.#intake.push(chunk);
  #onEnd = (): void => void this.#stop("host_gone");

  constructor(options: SidecarOptions) {
    this.#options = options;
    this.#timers = options.timers ?? systemTimers;
    this.#diagnostics = createDiagnostics(options.debug);
    const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    const reader = new FrameReader(maxFrameBytes);
    const codec = bodyCodec(options.encoding ?? "json");
    this.#writer = new FrameWriter({
      output: options.output,
      codec,
      maxFrameBytes,
      diagnostics: this.#diagnostics,
      onGone: () => void this.#stop("host_gone"),
    });
    const send = (frame: SidecarFrame): void => this.#writer.write(frame);
    this.#hostCalls = new HostCalls(send);
    this.#hostApprovals = new HostApprovals(send);
    this.#intake = new HostFrameIntake({
      reader,
      codec,
      diagnostics: this.#diagnostics,
      hostCalls: this.#hostCalls,
      hostApprovals: this.#hostApprovals,
      send,
      greeted: () => this.#dispatcher.greeted,
      onFrame: (frame, ids) => this.#onFrame(frame, ids),
    });
    this.#dispatcher = new SessionDispatcher({
      send,
      hostCalls: this.#hostCalls,
      hostApprovals: this.#hostApprovals,
      diagnostics: this.#diagnostics,
      encoding: codec.encoding,
      maxFrameBytes: reader.maxFrameBytes,
      stopping: () => this.#stopping !== undefined,
    });
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
    options.input.on("data", this.#onData);
    options.input.on("end", this.#onEnd);
    options.input.on("close", this.#onEnd);
    options.input.on("error", this.#onEnd);
    this.#diagnostics.log("start", { version: SIDECAR_VERSION, encoding: codec.encoding, max_frame_bytes: maxFrameBytes });
  }

  get sessionCount(): number {
    return this.#dispatcher.sessionCount;
  }

  stop(): Promise<SidecarExit> {
    return this.#stop("host_gone");
  }

  /** A checked frame: refused while stopping; `shutdown` stops; every other one goes to the sessions. */
  #onFrame(frame: HostFrame, ids: HostFrameIds): void {
    if (this.#stopping !== undefined) {
      this.#writer.write(errorFrame("shutting_down", "the sidecar is shutting down", { frame_type: frame.type, ...ids }));
      return;
    }
    if (frame.type === "shutdown") return void this.#stop("shutdown");
    this.#dispatcher.handle(frame);
  }

  #stop(reason: SidecarExit["reason"]): Promise<SidecarExit> {
    this.#stopping ??= this.#shutDown(reason);
    return this.#stopping;
  }

  async #shutDown(reason: SidecarExit["reason"]): Promise<SidecarExit> {
    this.#diagnostics.log("stop", {
      reason,
      sessions: this.#dispatcher.sessionCount,
      opening: this.#dispatcher.openingCount,
      pending_calls: this.#hostCalls.pendingCount,
      pending_approvals: this.#hostApprovals.pendingCount,
    });
    const input = this.#options.input;
    input.off("data", this.#onData);
    if (this.#intake.midFrame) this.#diagnostics.log("truncated-frame");
    const closing = this.#dispatcher.closeAll(reason);
    if (reason === "host_gone") {
      // Nobody will answer: the calls are settled now, not at their deadlines.
      this.#hostCalls.abandon("the host is gone");
      this.#hostApprovals.abandon("the host is gone");
      await this.#withDeadline(closing, this.#options.closeDeadlineMs ?? 800);
    } else {
      await closing;
      this.#writer.write({ type: "goodbye" });
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
