/**
 * The public options type-check as users write them (issue 24): under
 * `exactOptionalPropertyTypes` (on in `tsc --init` since TypeScript 5.9) an optional option given
 * a value that may be `undefined` (`token: process.env.X`, as docs/getting-started.md has it)
 * compiles, because optional options are typed `?: T | undefined`; and a local backend with
 * neither `url` nor `spawn` (or both) is a type error. Compiles test/session/fixtures/option-types.ts
 * with the TypeScript compiler, with the option on and off.
 */
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("fixtures/option-types.ts", import.meta.url));
const root = fileURLToPath(new URL("../../", import.meta.url));

function diagnostics(exactOptionalPropertyTypes: boolean): string[] {
  const program = ts.createProgram([fixture], {
    strict: true,
    noEmit: true,
    exactOptionalPropertyTypes,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: ["node"],
    baseUrl: root,
    paths: { toolrelay: ["packages/toolrelay/src/index.ts"] },
  });
  // Only the fixture's: users compile against the declarations, never the SDK's own source.
  const file = program.getSourceFile(fixture);
  return ts.getPreEmitDiagnostics(program, file).map((diagnostic) => {
    const where = diagnostic.file
      ? `${diagnostic.file.fileName.replace(root, "")}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
      : "";
    return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`;
  });
}

describe("public option types", () => {
  it.each([true, false])(
    "compile as users write them (exactOptionalPropertyTypes: %s); a local backend needs exactly one of url and spawn",
    (exact) => {
      expect(diagnostics(exact)).toEqual([]);
    },
    60_000,
  );
});
