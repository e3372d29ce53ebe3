/**
 * The built package, as users get it: ESM and CommonJS entry points, the
 * subpaths, `instanceof ToolrelayError` across the two copies, and docs that
 * list every error code. `npm test` builds before it runs the tests.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const root = new URL("../../", import.meta.url);
/** The SDK package (packages/toolrelay): its dist/ and package.json are what users install. */
const sdk = new URL("packages/toolrelay/", root);

/** A built file of a package (the SDK's unless `packageRoot` says otherwise). */
function built(path: string, packageRoot: URL = sdk): string {
  const file = new URL(path, packageRoot).pathname;
  if (!existsSync(file)) throw new Error(`${path} is missing: run \`npm run build\` first (npm test does)`);
  return file;
}

describe("package surface", () => {
  it("exposes the same public names from the ESM and CommonJS builds", async () => {
    const esm = (await import(built("dist/index.js"))) as Record<string, unknown>;
    const cjs = require(built("dist/index.cjs")) as Record<string, unknown>;
    for (const name of [
      "createSession",
      "defineTool",
      "ToolrelayError",
      "isToolrelayError",
      "ToolCallAbortError",
      "textResult",
      "errorResult",
    ]) {
      expect(typeof esm[name], `ESM ${name}`).toBe("function");
      expect(typeof cjs[name], `CJS ${name}`).toBe("function");
    }
    expect(Object.keys(esm).sort()).toEqual(Object.keys(cjs).sort());
  });

  it("recognises a ToolrelayError from the other module format", async () => {
    const esm = (await import(built("dist/index.js"))) as {
      ToolrelayError: new (code: string, message: string) => Error;
      isToolrelayError(value: unknown): boolean;
    };
    const cjs = require(built("dist/index.cjs")) as typeof esm;
    const fromCjs = new cjs.ToolrelayError("ABORTED", "x");
    expect(fromCjs instanceof esm.ToolrelayError).toBe(true);
    expect(esm.isToolrelayError(fromCjs)).toBe(true);
  });

  it("ships the testing subpath in both formats", async () => {
    const esm = (await import(built("dist/testing/index.js"))) as Record<string, unknown>;
    const cjs = require(built("dist/testing/index.cjs")) as Record<string, unknown>;
    expect(typeof esm.startScriptedRuntime).toBe("function");
    expect(typeof cjs.startScriptedRuntime).toBe("function");
  });

  it("keeps dependencies out of the bundle (zod and the ACP SDK are peers; ws and the Letta client are dependencies)", () => {
    built("dist/index.js");
    const files = readdirSync(new URL("dist/", sdk), { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".js"));
    const code = files.map((name) => readFileSync(new URL(`dist/${name}`, sdk), "utf8")).join("\n");
    expect(code).toMatch(/from ["']zod["']/);
    expect(code).toMatch(/from ["']ws["']/);
    expect(code).toMatch(/from ["']@agentclientprotocol\/sdk["']/);
    expect(code).not.toMatch(/class ZodError|var ZodError|ZodFirstPartyTypeKind/);
    // The bundler marks every module it inlined from node_modules: p-timeout alone, on purpose
    // (tsup.config.ts says why); every other dependency is imported.
    const bundled = new Set([...code.matchAll(/^\/\/ (?:\.\.\/)*node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((match) => match[1]));
    expect([...bundled]).toEqual(["p-timeout"]);
    // Our own code, unminified, for eight entry points (~660 KB at 0.1.0 with the sidecar and the
    // OpenAI bridge). A bundled zod alone would add ~500 KB.
    expect(code.length).toBeLessThan(800_000);
  });

  it("keeps the MCP SDK (an optional peer) out of the main entry and out of the bundle", () => {
    const main = readFileSync(built("dist/index.js"), "utf8");
    const chunks = [...main.matchAll(/from ["'](\.\/[^"']+)["']/g)].map((match) => readFileSync(new URL(`dist/${match[1]}`, sdk), "utf8"));
    for (const code of [main, ...chunks]) expect(code).not.toMatch(/@modelcontextprotocol\/sdk/);
    expect(readFileSync(built("dist/mcp/index.js"), "utf8")).toMatch(/from ["']@modelcontextprotocol\/sdk\/client\/index\.js["']/);
  });

  it("ships the MCP subpath and the relay package in both formats", async () => {
    const relayPackage = new URL("packages/relay/", root);
    for (const [path, name, packageRoot] of [
      ["dist/index", "startRelay", relayPackage],
      ["dist/mcp/index", "mcpTools", sdk],
    ] as const) {
      const esm = (await import(built(`${path}.js`, packageRoot))) as Record<string, unknown>;
      const cjs = require(built(`${path}.cjs`, packageRoot)) as Record<string, unknown>;
      expect(typeof esm[name], `${path} ESM`).toBe("function");
      expect(typeof cjs[name], `${path} CJS`).toBe("function");
    }
  });

  it("keeps the relay package on the SDK's published entry points only (toolrelay/protocol)", () => {
    const relayDist = new URL("packages/relay/dist/", root);
    const code = readdirSync(relayDist)
      .filter((name) => /\.c?js$/.test(name))
      .map((name) => readFileSync(new URL(name, relayDist), "utf8"))
      .join("\n");
    const toolrelayImports = new Set([...code.matchAll(/(?:from |require\()["'](toolrelay[^"']*)["']/g)].map((match) => match[1]));
    expect([...toolrelayImports]).toEqual(["toolrelay/protocol"]);
    expect(code).not.toMatch(/packages\/toolrelay|\.\.\/toolrelay/);
  });

  it("ships the ACP subpath as ESM only, like its peer @agentclientprotocol/sdk", async () => {
    const esm = (await import(built("dist/acp/index.js"))) as Record<string, unknown>;
    expect(typeof esm.startAcpAgent).toBe("function");
    expect(existsSync(new URL("dist/acp/index.cjs", sdk))).toBe(false);
    const manifest = JSON.parse(readFileSync(new URL("package.json", sdk), "utf8")) as {
      exports: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(manifest.exports["./acp"]!)).toEqual(["import"]);
    const peer = JSON.parse(readFileSync(new URL("node_modules/@agentclientprotocol/sdk/package.json", root), "utf8")) as { type?: string };
    expect(peer.type).toBe("module");
  });

  it("toolrelay/acp exports what an editor integration uses, and no helper of the tools", async () => {
    const esm = (await import(built("dist/acp/index.js"))) as Record<string, unknown>;
    expect(Object.keys(esm).sort()).toEqual(
      [
        "EditorRequestError",
        "WorkingRoots",
        "createEditorTools",
        "editorChannelFor",
        "editorPermissionDecider",
        "presentToolCall",
        "runAcpPrompt",
        "startAcpAgent",
      ].sort(),
    );
  });

  it("keeps the session's internals out of the declarations (stripInternal, private constructors)", () => {
    const declarations = readdirSync(new URL("dist/", sdk))
      .filter((file) => file.endsWith(".d.ts"))
      .map((file) => readFileSync(new URL(`dist/${file}`, sdk), "utf8"))
      .join("\n");
    // Both classes are generic over the session's tools (`Turn<TTools …>`) since issue 26.
    const turn = /declare class Turn[ <][\s\S]*?\n}/.exec(declarations)?.[0] ?? "";
    const session = /declare class Session[ <][\s\S]*?\n}/.exec(declarations)?.[0] ?? "";
    expect(turn).toContain("private constructor();");
    expect(session).toContain("private constructor();");
    for (const internal of ["finish(", "fail(", "push(", "toolNameOf(", "static create("]) expect(turn).not.toContain(internal);
    for (const internal of ["start(): Promise<void>", "static create("]) expect(session).not.toContain(internal);
    expect(declarations).not.toMatch(/kind: "link"/);
  });

  it("documents every error code in docs/errors.md", () => {
    const source = readFileSync(new URL("packages/toolrelay/src/errors.ts", root), "utf8");
    const block = source.slice(source.indexOf("export type ToolrelayErrorCode"), source.indexOf("export interface ToolrelayErrorOptions"));
    const codes = [...block.matchAll(/\|\s*"([A-Z_]+)"/g)].map((match) => match[1]!);
    expect(codes.length).toBeGreaterThan(10);
    const docs = readFileSync(new URL("docs/errors.md", root), "utf8");
    for (const code of codes) expect(docs, code).toContain(`\`${code}\``);
  });
});
