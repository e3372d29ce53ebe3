/**
 * Keeps the sidecar's stdout for frames only, and its stderr for its own
 * diagnostics only. `guardStdio` takes the real write functions for itself,
 * then replaces `process.stdout.write` and `process.stderr.write` (which the
 * global `console` writes through) with functions that swallow what any
 * library — the SDK included — would write: not a byte of it reaches the
 * host's frame stream, and none of its content reaches stderr (with
 * `--debug`, one line says how many bytes were swallowed). Node's own
 * warnings are silenced the same way (with `--debug`, their names only).
 */
import { Writable } from "node:stream";

export interface GuardedStdio {
  /** The frame stream: the real stdout. */
  frames: Writable;
  /** Diagnostics lines to the real stderr; `undefined` without `debug`. */
  diagnostics: ((line: string) => void) | undefined;
  /** Write to the real stderr whatever `debug` says (usage errors, before any frame is read). */
  stderr(text: string): void;
  /** Put the original functions back (tests). */
  restore(): void;
}

type WriteFunction = typeof process.stdout.write;

export function guardStdio(options: { debug: boolean }): GuardedStdio {
  const stdout = process.stdout;
  const stderr = process.stderr;
  const originalStdoutWrite = stdout.write;
  const originalStderrWrite = stderr.write;
  const writeStdout = originalStdoutWrite.bind(stdout) as (chunk: Uint8Array, callback: (error?: Error | null) => void) => boolean;
  const writeStderr = originalStderrWrite.bind(stderr) as (chunk: string) => boolean;
  const diagnostics = options.debug ? (line: string) => void writeStderr(line) : undefined;

  const swallow = (stream: "stdout" | "stderr"): WriteFunction =>
    ((chunk: string | Uint8Array, encodingOrCallback?: unknown, callback?: unknown) => {
      const bytes = typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
      diagnostics?.(`toolrelay-sidecar: something in the process wrote ${bytes} bytes to ${stream}; swallowed, not shown\n`);
      const done = typeof encodingOrCallback === "function" ? encodingOrCallback : callback;
      if (typeof done === "function") queueMicrotask(() => (done as (error?: Error | null) => void)());
      return true;
    }) as WriteFunction;
  stdout.write = swallow("stdout");
  stderr.write = swallow("stderr");
  // A broken pipe is reported by the frame stream's write callback; the raw stream must not throw it.
  const ignore = (): void => undefined;
  stdout.on("error", ignore);

  const warningListeners = process.listeners("warning");
  process.removeAllListeners("warning");
  const onWarning = (warning: Error): void => diagnostics?.(`toolrelay-sidecar: process warning ${warning.name}\n`);
  process.on("warning", onWarning);

  const frames = new Writable({
    write(chunk: Uint8Array, _encoding, callback) {
      writeStdout(chunk, (error) => callback(error ?? undefined));
    },
  });
  return {
    frames,
    diagnostics,
    stderr: (text) => void writeStderr(text),
    restore() {
      stdout.write = originalStdoutWrite;
      stderr.write = originalStderrWrite;
      stdout.off("error", ignore);
      process.off("warning", onWarning);
      for (const listener of warningListeners) process.on("warning", listener);
    },
  };
}
