/**
 * The sidecar's command line, `toolrelay-sidecar [options]` (docs/sidecar.md "Command-line
 * tools"). stdin and stdout carry frames and nothing else; diagnostics go to stderr with `--debug`
 * only. A usage error, `-h` / `--help` and `--version` are the one thing written to stderr without
 * it, before any frame is read. Exit codes: 0 after `shutdown` or when the host is gone (and after
 * `--help` / `--version`), 2 for a usage error, 70 for a bug (an uncaught exception).
 */
import { type CliArguments, type CliCommand, CliUsageError, runCommand } from "@toolrelay/cli-kit";
import manifest from "../../package.json" with { type: "json" };
import { SIDECAR_ENCODINGS, type SidecarEncoding } from "./frame-encoding.js";
import { MAX_DECLARABLE_FRAME_BYTES } from "./frame-reader.js";
import { DEFAULT_MAX_FRAME_BYTES } from "./protocol-values.js";
import { startSidecar } from "./sidecar.js";
import { guardStdio, type GuardedStdio } from "./stdio-guard.js";

/** Smallest `--max-frame-bytes`. */
export const MIN_MAX_FRAME_BYTES = 1_024;

/** The sidecar's exit code for a bug (an uncaught exception), besides the kit's 0 / 1 / 2. */
export const SIDECAR_BUG_EXIT_CODE = 70;

/** `toolrelay-sidecar`: its options, from which the parser and `--help` are made. */
export const SIDECAR_COMMAND: CliCommand = {
  name: "toolrelay-sidecar",
  synopsis: "[options]",
  description:
    "Speaks the toolrelay sidecar protocol on stdin/stdout: frames of a 4-byte\nbig-endian length and a body (docs/sidecar.md). Nothing else is written to stdout:\n--help and --version print to stderr.",
  version: manifest.version,
  groups: [
    {
      options: {
        encoding: { type: "string", value: `<${SIDECAR_ENCODINGS.join("|")}>`, help: "frame bodies (default json)" },
        "max-frame-bytes": {
          type: "string",
          value: "<n>",
          help: `largest frame body accepted (default ${DEFAULT_MAX_FRAME_BYTES}, at least ${MIN_MAX_FRAME_BYTES})`,
        },
        debug: { type: "boolean", help: "diagnostics on stderr: frame types, ids, sizes, codes (never payloads)" },
      },
    },
  ],
};

export interface SidecarCliOptions {
  encoding: SidecarEncoding;
  maxFrameBytes: number;
  debug: boolean;
}

/** The sidecar options a parsed command line asks for. Throws {@link CliUsageError} for a value it cannot use. */
export function sidecarOptionsOf(args: CliArguments): SidecarCliOptions {
  const encodingText = args.text("encoding") ?? "json";
  const encoding = SIDECAR_ENCODINGS.find((candidate) => candidate === encodingText);
  if (encoding === undefined) throw new CliUsageError(`--encoding must be json or msgpack, got ${JSON.stringify(encodingText)}`);
  const maxFrameBytes =
    args.integer("max-frame-bytes", { min: MIN_MAX_FRAME_BYTES, max: MAX_DECLARABLE_FRAME_BYTES }) ?? DEFAULT_MAX_FRAME_BYTES;
  return { encoding, maxFrameBytes, debug: args.flag("debug") };
}

/**
 * Run the sidecar on this process's stdio; resolves with the exit code once
 * it stopped. The caller exits the process with it. `stdio`: the guard the
 * caller installed already (bin.ts does, before it loads anything else).
 * Default: one installed here.
 */
export async function runSidecarCli(argv: readonly string[], guarded?: GuardedStdio): Promise<number> {
  const stdio = guarded ?? guardStdio({ debug: argv.includes("--debug") });
  // stdout is the host's frame stream: what a command line prints goes to stderr.
  const parsed = await runCommand(SIDECAR_COMMAND, argv, sidecarOptionsOf, { stdout: stdio.stderr, stderr: stdio.stderr });
  if (parsed.started === undefined) return parsed.exitCode;
  const options = parsed.started;
  process.on("uncaughtException", (error) => {
    // A bug. Its name and stack frames only: a message might quote a payload.
    const frames = (error.stack ?? "").split("\n").filter((line) => line.trimStart().startsWith("at "));
    stdio.diagnostics?.(`toolrelay-sidecar: uncaught ${error.name}\n${frames.join("\n")}\n`);
    process.exit(SIDECAR_BUG_EXIT_CODE);
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
