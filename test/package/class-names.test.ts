/**
 * The built package's classes keep their names (issue 24): esbuild renames a class that refers to
 * itself (`var ToolrelayError = class _ToolrelayError`), and Node prints an uncaught error, or any
 * instance, by its constructor's name — users saw `_ToolrelayError: …`. tsup's `keepNames` keeps
 * them. Runs against dist/ (`npm test` builds first).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const sdk = new URL("../../packages/toolrelay/", import.meta.url);

function built(path: string): string {
  const file = new URL(path, sdk).pathname;
  if (!existsSync(file)) throw new Error(`${path} is missing: run \`npm run build\` first (npm test does)`);
  return file;
}

type Entry = Record<string, { name: string } & (new (...args: never[]) => unknown)>;

describe("class names in the built package", () => {
  it("ToolrelayError, ToolCallAbortError, Session and Turn are named as in the source, in the ESM and CommonJS builds", async () => {
    const esm = (await import(built("dist/index.js"))) as Entry;
    const cjs = require(built("dist/index.cjs")) as Entry;
    for (const entry of [esm, cjs]) {
      expect(["ToolrelayError", "ToolCallAbortError", "Session", "Turn"].map((name) => entry[name]!.name)).toEqual([
        "ToolrelayError",
        "ToolCallAbortError",
        "Session",
        "Turn",
      ]);
    }
    const { ToolrelayError } = cjs as unknown as { ToolrelayError: new (code: string, message: string) => Error };
    expect(inspect(new ToolrelayError("INTERNAL", "boom")).split("\n")[0]).toBe("ToolrelayError: boom");
  });

  it("an uncaught ToolrelayError (a rejected async main, as a script has it) prints as `ToolrelayError: <message>`", () => {
    const folder = mkdtempSync(join(tmpdir(), "toolrelay-class-names-"));
    try {
      const script = join(folder, "main.cjs");
      writeFileSync(
        script,
        `const { ToolrelayError } = require(${JSON.stringify(built("dist/index.cjs"))});\n` +
          `async function main() { throw new ToolrelayError("INTERNAL", "boom"); }\nmain();\n`,
      );
      const run = spawnSync(process.execPath, [script], { encoding: "utf8" });
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/^ToolrelayError: boom$/m);
      expect(run.stderr).not.toContain("_ToolrelayError");
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
