/**
 * Every import of every source file, read with the TypeScript compiler's parser: `import` (also
 * `import type` and side-effect imports), `export … from`, `import x = require(…)`, `require(…)`,
 * dynamic `import(…)` and `import("…")` types. Each is resolved to a file of the tree (a relative
 * path, `.js` meaning `.ts`, a folder meaning its `index.ts`), to a workspace package's entry point
 * (`toolrelay/protocol`), or to a data file (`../../package.json`); anything else (`node:fs`, `zod`)
 * is outside the tree.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { posix } from "node:path";
import ts from "typescript";

/** Source files and the entry points that lead into them. Paths are from the repository root, `/`-separated. */
export interface SourceTree {
  /** path → text. */
  files: ReadonlyMap<string, string>;
  /** A published entry point (`toolrelay`, `toolrelay/protocol`) → the source file it builds from. */
  entryPoints: ReadonlyMap<string, string>;
}

/** One import as written. */
export interface ImportSite {
  specifier: string;
  /** 1-based. */
  line: number;
  /** `import type`, `export type … from`, an `import("…")` type: erased from the build, but still an edge. */
  typeOnly: boolean;
}

/** One import, resolved. */
export interface ImportEdge extends ImportSite {
  from: string;
  /** The file it reaches; `undefined` for a module outside the tree, or one that does not resolve (`unresolved`). */
  to: string | undefined;
  /** The entry point named, for a workspace package's specifier (`toolrelay/protocol`). */
  entryPoint: string | undefined;
  /** A relative specifier, or a workspace package's subpath, that names no file. */
  unresolved: boolean;
  /** A relative import of a data file (`.json`): the path it names, from the repository root. */
  data: string | undefined;
}

/** A dynamic `import()` or `require()` whose specifier is not a literal: it cannot be checked. */
export interface OpaqueImport {
  from: string;
  line: number;
}

/** The imports of one file. */
export function importsOf(path: string, text: string): { imports: ImportSite[]; opaque: number[] } {
  // Comments are not read (no JSDoc parsing): an import in a comment is none, and parsing is twice as fast.
  const options = { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone };
  const source = ts.createSourceFile(path, text, options, false, ts.ScriptKind.TS);
  const imports: ImportSite[] = [];
  const opaque: number[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const add = (node: ts.Node, specifier: string, typeOnly: boolean) => imports.push({ specifier, line: lineOf(node), typeOnly });
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.moduleSpecifier.text, node.importClause?.isTypeOnly === true);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression)) add(node, expression.text, node.isTypeOnly);
      else opaque.push(lineOf(node));
    } else if (ts.isCallExpression(node) && isImportOrRequire(node)) {
      const argument = node.arguments[0];
      if (argument !== undefined && ts.isStringLiteralLike(argument)) add(node, argument.text, false);
      else opaque.push(lineOf(node));
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node, node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { imports, opaque };
}

function isImportOrRequire(call: ts.CallExpression): boolean {
  if (call.expression.kind === ts.SyntaxKind.ImportKeyword) return true;
  return ts.isIdentifier(call.expression) && call.expression.text === "require" && call.arguments.length === 1;
}

/** Every import of every file of `tree`, resolved. */
export function importGraph(tree: SourceTree): { edges: ImportEdge[]; opaque: OpaqueImport[] } {
  const edges: ImportEdge[] = [];
  const opaque: OpaqueImport[] = [];
  for (const [from, text] of [...tree.files].sort(([a], [b]) => a.localeCompare(b))) {
    const found = importsOf(from, text);
    for (const line of found.opaque) opaque.push({ from, line });
    for (const site of found.imports) edges.push({ ...site, from, ...resolve(tree, from, site.specifier) });
  }
  return { edges, opaque };
}

function resolve(tree: SourceTree, from: string, specifier: string): Pick<ImportEdge, "to" | "entryPoint" | "unresolved" | "data"> {
  const none = { to: undefined, entryPoint: undefined, unresolved: false, data: undefined };
  if (specifier.startsWith(".")) {
    const base = posix.normalize(posix.join(posix.dirname(from), specifier));
    if (base.endsWith(".json")) return { ...none, data: base };
    const stem = base.replace(/\.(js|ts|mjs|cjs)$/, "");
    const to = [`${stem}.ts`, `${base}.ts`, posix.join(base, "index.ts")].find((candidate) => tree.files.has(candidate));
    return { ...none, to, unresolved: to === undefined };
  }
  const entry = tree.entryPoints.get(specifier);
  if (entry !== undefined) return { ...none, to: entry, entryPoint: specifier };
  // A subpath of a workspace package that it does not publish (`toolrelay/src/internal/timers.js`).
  const ours = [...tree.entryPoints.keys()].some((name) => packageOf(name) === packageOf(specifier));
  return { ...none, entryPoint: ours ? specifier : undefined, unresolved: ours };
}

/** `toolrelay/protocol` → `toolrelay`; `@toolrelay/relay/x` → `@toolrelay/relay`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

/** A workspace package as its package.json describes it. */
interface PackageManifest {
  name: string;
  workspaces?: string[];
  exports?: Record<string, unknown>;
}

/**
 * The source tree of the repository at `root`: every `.ts` file (but declaration files) under the
 * `src/` of each workspace package (the root package.json's `workspaces`), and every entry point
 * those packages export (package.json `exports`), each mapped to the source file it builds from:
 * tsconfig.json's `paths` for a published package (its exports name built files), the export
 * itself for a package that exports its source.
 */
export function readSourceTree(root: string): SourceTree {
  const read = (path: string) => readFileSync(posix.join(root, path), "utf8");
  const workspaces = (JSON.parse(read("package.json")) as PackageManifest).workspaces ?? [];
  const config = ts.readConfigFile(posix.join(root, "tsconfig.json"), (path) => readFileSync(path, "utf8"));
  if (config.error) throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(config.error.messageText, "\n")}`);
  const paths = (config.config as { compilerOptions?: { paths?: Record<string, string[]> } }).compilerOptions?.paths ?? {};
  const files = new Map<string, string>();
  const entryPoints = new Map<string, string>();
  const walk = (folder: string): void => {
    for (const name of readdirSync(posix.join(root, folder)).sort()) {
      const path = posix.join(folder, name);
      if (statSync(posix.join(root, path)).isDirectory()) walk(path);
      else if (path.endsWith(".ts") && !path.endsWith(".d.ts")) files.set(path, read(path));
    }
  };
  for (const workspace of workspaces) {
    if (existsSync(posix.join(root, workspace, "src"))) walk(posix.join(workspace, "src"));
    const manifest = JSON.parse(read(posix.join(workspace, "package.json"))) as PackageManifest;
    for (const [key, target] of Object.entries(manifest.exports ?? {})) {
      if (key.endsWith(".json")) continue;
      const specifier = key === "." ? manifest.name : `${manifest.name}/${key.replace(/^\.\//, "")}`;
      const mapped = paths[specifier]?.[0];
      const source =
        mapped !== undefined
          ? posix.normalize(mapped)
          : typeof target === "string" && target.endsWith(".ts")
            ? posix.join(workspace, target)
            : undefined;
      if (source === undefined)
        throw new Error(`${specifier} (${workspace}/package.json exports) names no source file: add it to tsconfig.json paths`);
      entryPoints.set(specifier, source);
    }
  }
  return { files, entryPoints };
}
