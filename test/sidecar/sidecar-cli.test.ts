import { readFileSync } from "node:fs";
import { CliUsageError, parseCommandLine } from "@toolrelay/cli-kit";
import { describe, expect, it } from "vitest";
import { MIN_MAX_FRAME_BYTES, SIDECAR_COMMAND, sidecarOptionsOf } from "../../packages/toolrelay/src/sidecar/cli.js";
import { SIDECAR_VERSION } from "../../packages/toolrelay/src/sidecar/sidecar-version.js";

/** The sidecar options of a command line (through the CLI's own parser and option table). */
function parseSidecarArguments(argv: string[]) {
  const line = parseCommandLine(SIDECAR_COMMAND, argv);
  if (line.kind !== "run") throw new Error(`expected options, got ${line.kind}`);
  return sidecarOptionsOf(line.arguments);
}

describe("toolrelay-sidecar arguments", () => {
  it("defaults to JSON, 16 MiB frames, no diagnostics", () => {
    expect(parseSidecarArguments([])).toEqual({ encoding: "json", maxFrameBytes: 16_777_216, debug: false });
    expect(parseSidecarArguments(["--encoding", "msgpack", "--max-frame-bytes", "4096", "--debug"])).toEqual({
      encoding: "msgpack",
      maxFrameBytes: 4_096,
      debug: true,
    });
  });

  it.each([
    [["--encoding", "cbor"], '--encoding must be json or msgpack, got "cbor"'],
    [["--max-frame-bytes", String(MIN_MAX_FRAME_BYTES - 1)], "--max-frame-bytes must be an integer from 1024 to 4294967295"],
    [["--max-frame-bytes", "lots"], "--max-frame-bytes must be an integer from 1024 to 4294967295"],
    [["--max-frame-bytes", String(2 ** 32)], "--max-frame-bytes must be an integer from 1024 to 4294967295"],
    [["extra"], "Unexpected argument 'extra'"],
    [["--nope"], "Unknown option '--nope'"],
  ])("refuses %j: a usage error (exit code 2)", (argv, message) => {
    expect(() => parseSidecarArguments(argv)).toThrow(CliUsageError);
    expect(() => parseSidecarArguments(argv)).toThrow(message);
  });

  it("reports the package's version", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../packages/toolrelay/package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(SIDECAR_VERSION).toBe(manifest.version);
    expect(SIDECAR_COMMAND.version).toBe(manifest.version);
  });
});
