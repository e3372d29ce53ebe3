/**
 * A minimal sidecar host for tests: writes frames to the sidecar's input,
 * reads every byte of its output back into frames (keeping the raw bytes, so a
 * test can prove that nothing but frames came out), and waits for frames with
 * deadlines. Works in process (PassThrough streams around `startSidecar`) and
 * against the `toolrelay-sidecar` executable (its stdio).
 */
import type { Readable, Writable } from "node:stream";
import { PassThrough } from "node:stream";
import { afterEach } from "vitest";
import { bodyCodec, type SidecarEncoding } from "../../../packages/toolrelay/src/sidecar/frame-encoding.js";
import { FrameReader, frameBytes } from "../../../packages/toolrelay/src/sidecar/frame-reader.js";
import { sidecarFrameSchemas, type SidecarFrameType } from "../../../packages/toolrelay/src/sidecar/sidecar-frames.js";
import { startSidecar, type Sidecar, type SidecarOptions } from "../../../packages/toolrelay/src/sidecar/sidecar.js";
import { formatIssues } from "../../../packages/toolrelay/src/wire/format-issues.js";

const hosts: FrameHost[] = [];

// Every frame any host of a test read must be a frame of the protocol, valid against its schema.
afterEach(() => {
  const problems = hosts.splice(0).flatMap((host) => host.problems);
  if (problems.length > 0) throw new Error(`the sidecar wrote what is not a valid frame:\n${problems.join("\n")}`);
});

export type AnyFrame = Record<string, unknown> & { type: string };

export class FrameHost {
  /** Every frame read, in order. */
  readonly frames: AnyFrame[] = [];
  /** Every byte the sidecar wrote. */
  readonly bytes: Buffer[] = [];
  /** Problems with the output: a body that is not a frame (these must stay empty). */
  readonly problems: string[] = [];
  readonly encoding: SidecarEncoding;
  #input: Writable;
  #codec;
  #reader = new FrameReader(0xffff_ffff);
  #waiters = new Set<() => void>();
  #ended = false;

  constructor(input: Writable, output: Readable, encoding: SidecarEncoding = "json") {
    this.encoding = encoding;
    this.#input = input;
    this.#codec = bodyCodec(encoding);
    hosts.push(this);
    input.on("error", () => undefined);
    output.on("data", (chunk: Buffer) => {
      this.bytes.push(chunk);
      for (const reading of this.#reader.push(chunk)) {
        if (reading.kind !== "frame") continue;
        const decoded = this.#codec.decode(reading.body);
        if (!decoded.ok || typeof (decoded.value as AnyFrame)?.type !== "string") {
          this.problems.push(decoded.ok ? "a body without a type" : decoded.error);
          continue;
        }
        const frame = decoded.value as AnyFrame;
        const schema = Object.hasOwn(sidecarFrameSchemas, frame.type) ? sidecarFrameSchemas[frame.type as SidecarFrameType] : undefined;
        const checked = schema?.safeParse(frame);
        if (checked === undefined) this.problems.push(`unknown frame type ${frame.type}`);
        else if (!checked.success) this.problems.push(`${frame.type}: ${formatIssues(checked.error.issues)}`);
        this.frames.push(frame);
      }
      this.#wake();
    });
    output.on("end", () => {
      this.#ended = true;
      if (this.#reader.midFrame) this.problems.push("the output ended inside a frame");
      this.#wake();
    });
  }

  /** `true` once the sidecar's output ended. */
  get ended(): boolean {
    return this.#ended;
  }

  send(frame: object): void {
    this.#input.write(frameBytes(this.#codec.encode(frame)));
  }

  /** Write raw bytes (malformed frames, split headers, ...). */
  sendRaw(bytes: Uint8Array): void {
    this.#input.write(bytes);
  }

  /** End the sidecar's input (the host goes away). */
  endInput(): void {
    this.#input.end();
  }

  /** The first frame from `from` (an index into `frames`) that matches; rejects after `timeoutMs`. */
  next(match: Partial<AnyFrame> | ((frame: AnyFrame) => boolean), options: { from?: number; timeoutMs?: number } = {}): Promise<AnyFrame> {
    const test =
      typeof match === "function" ? match : (frame: AnyFrame) => Object.entries(match).every(([key, value]) => frame[key] === value);
    const from = options.from ?? 0;
    const timeoutMs = options.timeoutMs ?? 10_000;
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.frames.slice(from).find(test);
        if (found === undefined) return false;
        clearTimeout(timer);
        this.#waiters.delete(check as () => void);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check as () => void);
        reject(
          new Error(
            `frame host: no frame matching ${describe(match)} within ${timeoutMs} ms; got ${this.frames.map((frame) => frame.type).join(", ")}`,
          ),
        );
      }, timeoutMs);
      if (!check()) this.#waiters.add(check as () => void);
    });
  }

  /** Send `hello` offering `versions` (default: every version this sidecar speaks) and wait for `welcome`. */
  async greet(versions: readonly number[] = [1, 2]): Promise<AnyFrame> {
    const from = this.frames.length;
    this.send({ type: "hello", versions });
    return this.next({ type: "welcome" }, { from });
  }

  /** Open a session on a local backend and wait for `session_opened` (or throw the error frame). */
  async open(session: string, url: string, tools: object[], extra: Record<string, unknown> = {}): Promise<AnyFrame> {
    const from = this.frames.length;
    this.send({
      type: "open_session",
      session,
      backend: { kind: "local", url },
      agent: { create: { model: "scripted/test" } },
      tools,
      ...extra,
    });
    const answer = await this.next((frame) => frame.session === session && (frame.type === "session_opened" || frame.type === "error"), {
      from,
    });
    if (answer.type === "error") throw new Error(`open_session failed: ${String(answer.code)}: ${String(answer.message)}`);
    return answer;
  }

  /** Answer every `tool_call` of `session` with `answer(frame)` (a frame without type/session/call), from now on. */
  answerCalls(answer: (call: AnyFrame) => Record<string, unknown> | undefined): () => void {
    let seen = this.frames.length;
    const onFrame = (): void => {
      for (; seen < this.frames.length; seen++) {
        const frame = this.frames[seen]!;
        if (frame.type !== "tool_call") continue;
        const body = answer(frame);
        if (body !== undefined) this.send({ session: frame.session, call: frame.call, ...body });
      }
    };
    this.#waiters.add(onFrame);
    onFrame();
    return () => this.#waiters.delete(onFrame);
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

function describe(match: unknown): string {
  return typeof match === "function" ? "(predicate)" : JSON.stringify(match);
}

/** A sidecar in this process on PassThrough streams, with its host. */
export function inProcessSidecar(options: Partial<SidecarOptions> = {}): { sidecar: Sidecar; host: FrameHost } {
  const input = new PassThrough();
  const output = new PassThrough();
  const sidecar = startSidecar({ input, output, ...options });
  return { sidecar, host: new FrameHost(input, output, options.encoding ?? "json") };
}
