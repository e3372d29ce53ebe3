/**
 * The sidecar's command line: `toolrelay-sidecar [--encoding json|msgpack]
 * [--max-frame-bytes N] [--debug]`. stdin and stdout carry frames and nothing
 * else; diagnostics go to stderr with `--debug` only. A usage error (or
 * `--help`, `--version`) is the one thing written to stderr without it,
 * before any frame is read. Exit codes: 0 after `shutdown` or when the host
 * is gone, 2 for a usage error, 70 for a bug (an uncaught exception).
 */
import { parseArgs } from "node:util";
import { SIDECAR_ENCODINGS, type SidecarEncoding } from "./frame-encoding.js";
import { MAX_DECLARABLE_FRAME_BYTES } from "./frame-reader.js";
import { DEFAULT_MAX_FRAME_BYTES } from "./protocol-values.js";
import { startSidecar } from "./sidecar.js";
import { guardStdio, type GuardedStdio } from "./stdio-guard.js";
import { SIDECAR_VERSION } from "./sidecar-version.js";

export const SIDECAR_CLI_USAGE = `Usage: toolrelay-sidecar [options]

Speaks the toolrelay sidecar protocol on stdin/stdout: frames of a 4-byte
big-endian length and a body (docs/sidecar.md). Nothing else is written to stdout.

  --encoding <json|msgpack>  frame bodies (default json)
  --max-frame-bytes <n>      largest frame body accepted (default ${DEFAULT_MAX_FRAME_BYTES}, at least 1024)
  --debug                    diagnostics on stderr: frame types, ids, sizes, codes (never payloads)
  --version                  print the version to stderr
  --help                     print this text to stderr
`;

/** Smallest `--max-frame-bytes`. */
export const MIN_MAX_FRAME_BYTES = 1_024;

export interface SidecarCliOptions {
  encoding: SidecarEncoding;
  maxFrameBytes: number;
  debug: boolean;
}

/** Parse the arguments: options, or what to print and the exit code. */
export function parseSidecarArguments(argv: readonly string[]): { options: SidecarCliOptions } | { print: string; exitCode: number } {
  let values: { encoding?: string; "max-frame-bytes"?: string; debug?: boolean; version?: boolean; help?: boolean };
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        encoding: { type: "string" },
        "max-frame-bytes": { type: "string" },
        debug: { type: "boolean" },
        version: { type: "boolean" },
        help: { type: "boolean" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    return { print: `toolrelay-sidecar: ${(error as Error).message}\n\n${SIDECAR_CLI_USAGE}`, exitCode: 2 };
  }
  if (values.help) return { print: SIDECAR_CLI_USAGE, exitCode: 0 };
  if (values.version) return { print: `${SIDECAR_VERSION}\n`, exitCode: 0 };
  const encoding = values.encoding ?? "json";
  if (!(SIDECAR_ENCODINGS as readonly string[]).includes(encoding)) {
    return { print: `toolrelay-sidecar: --encoding must be json or msgpack, got ${JSON.stringify(encoding)}\n`, exitCode: 2 };
  }
  let maxFrameBytes = DEFAULT_MAX_FRAME_BYTES;
  if (values["max-frame-bytes"] !== undefined) {
    maxFrameBytes = Number(values["max-frame-bytes"]);
    if (!Number.isInteger(maxFrameBytes) || maxFrameBytes < MIN_MAX_FRAME_BYTES || maxFrameBytes > MAX_DECLARABLE_FRAME_BYTES) {
      return {
        print: `toolrelay-sidecar: --max-frame-bytes must be an integer in ${MIN_MAX_FRAME_BYTES}–${MAX_DECLARABLE_FRAME_BYTES}\n`,
        exitCode: 2,
      };
    }
  }
  return { options: { encoding: encoding as SidecarEncoding, maxFrameBytes, debug: values.debug === true } };
}

/**
 * Run the sidecar on this process's stdio; resolves with the exit code once
 * it stopped. The caller exits the process with it. `stdio`: the guard the
 * caller installed already (bin.ts does, before it loads anything else).
 * Default: one installed here.
 */
export async function runSidecarCli(argv: readonly string[], guarded?: GuardedStdio): Promise<number> {
  const parsed = parseSidecarArguments(argv);
  const stdio = guarded ?? guardStdio({ debug: "options" in parsed && parsed.options.debug });
  if ("print" in parsed) {
    stdio.stderr(parsed.print);
    return parsed.exitCode;
  }
  const { options } = parsed;
  process.on("uncaughtException", (error) => {
    // A bug. Its name and stack frames only: a message might quote a payload.
    const frames = (error.stack ?? "").split("\n").filter((line) => line.trimStart().startsWith("at "));
    stdio.diagnostics?.(`toolrelay-sidecar: uncaught ${error.name}\n${frames.join("\n")}\n`);
    process.exit(70);
  });
  process.on("unhandledRejection", (reason) => {
    stdio.diagnostics?.(`toolrelay-sidecar: unhandled rejection ${reason instanceof Error ? reason.name : typeof reason}\n`);
  });
  const sidecar = startSidecar({
    input: process.stdin,
    output: stdio.frames,
    encoding: options.encoding,
    maxFrameBytes: options.maxFrameBytes,
    debug: stdio.diagnostics,
  });
  const stop = (): void => void sidecar.stop();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  await sidecar.done;
  return 0;
}
