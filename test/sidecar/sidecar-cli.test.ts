import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MIN_MAX_FRAME_BYTES, parseSidecarArguments } from "../../packages/toolrelay/src/sidecar/cli.js";
import { SIDECAR_VERSION } from "../../packages/toolrelay/src/sidecar/sidecar-version.js";

describe("toolrelay-sidecar arguments", () => {
  it("defaults to JSON, 16 MiB frames, no diagnostics", () => {
    expect(parseSidecarArguments([])).toEqual({ options: { encoding: "json", maxFrameBytes: 16_777_216, debug: false } });
    expect(parseSidecarArguments(["--encoding", "msgpack", "--max-frame-bytes", "4096", "--debug"])).toEqual({
      options: { encoding: "msgpack", maxFrameBytes: 4_096, debug: true },
    });
  });

  it("refuses what it cannot use, with exit code 2", () => {
    for (const argv of [
      ["--encoding", "cbor"],
      ["--max-frame-bytes", String(MIN_MAX_FRAME_BYTES - 1)],
      ["--max-frame-bytes", "lots"],
      ["--max-frame-bytes", String(2 ** 32)],
      ["extra"],
      ["--nope"],
    ]) {
      expect(parseSidecarArguments(argv), argv.join(" ")).toMatchObject({
        exitCode: 2,
        print: expect.stringContaining("toolrelay-sidecar"),
      });
    }
  });

  it("reports the package's version", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(SIDECAR_VERSION).toBe(manifest.version);
    expect(parseSidecarArguments(["--version"])).toEqual({ print: `${manifest.version}\n`, exitCode: 0 });
  });
});
