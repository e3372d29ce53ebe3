// The files of the temporary consumer projects that scripts/consumer-test.mjs installs the packed
// tarball into. Generated from package.json `exports`, so every subpath is covered. What each
// project runs is plain user code: no test helpers of this repository reach it.

/**
 * The public subpaths of a package.json, e.g. `toolrelay`, `toolrelay/testing` (not
 * `./package.json`); `requirable` is false for an ESM-only subpath (no `require` condition).
 */
export function subpathsOf(manifest) {
  return Object.entries(manifest.exports)
    .filter(([key]) => key !== "./package.json" && !key.includes("*"))
    .map(([key, target]) => ({
      key,
      specifier: key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`,
      requirable: typeof target === "string" || "require" in target || "default" in target,
    }));
}

/**
 * A real turn against the scripted runtime from `<name>/testing`, with the two modules given as
 * `main` and `testing`: `createSession` registers (a request with a deadline), the script
 * answers, the session closes. Shared by the ESM, CommonJS and Jest projects.
 */
function turnSource() {
  return `
async function runTurn(main, testing) {
  const runtime = await testing.startScriptedRuntime({
    script: async (turn) => {
      await turn.say("pong from the scripted runtime");
    },
  });
  try {
    const session = await main.createSession({
      backend: { kind: "local", url: runtime.url },
      agent: { create: { model: "scripted/consumer" } },
      tools: [],
    });
    try {
      return await session.send("ping").result;
    } finally {
      await session.close();
    }
  } finally {
    await runtime.close();
  }
}
`;
}

/** Both copies of the error class recognise each other's instances, thrown by the package itself. */
function crossCopySource() {
  return `
async function checkAcrossCopies(esm, cjs) {
  assert.notEqual(esm.ToolrelayError, cjs.ToolrelayError, "the ESM and CJS builds are two copies");
  assert.ok(new cjs.ToolrelayError("ABORTED", "from CJS") instanceof esm.ToolrelayError, "CJS error instanceof the ESM class");
  assert.ok(new esm.ToolrelayError("ABORTED", "from ESM") instanceof cjs.ToolrelayError, "ESM error instanceof the CJS class");
  for (const [thrower, other] of [[cjs, esm], [esm, cjs]]) {
    await assert.rejects(thrower.createSession({}), (error) => {
      assert.ok(error instanceof other.ToolrelayError, "an error the package threw, seen from the other copy");
      assert.ok(other.isToolrelayError(error));
      assert.equal(error.code, "INVALID_OPTIONS");
      return true;
    });
  }
}
`;
}

function exportNamesCheck() {
  return `
async function checkEsmOnly(specifier) {
  const esm = await import(specifier);
  assert.ok(Object.keys(esm).length > 0, specifier + " exports something");
  assert.throws(() => require(specifier), { code: "ERR_PACKAGE_PATH_NOT_EXPORTED" }, specifier + " is ESM only: require names the reason");
  console.log("  " + specifier + ": " + Object.keys(esm).length + " exports (ESM only)");
}

function checkSubpath(specifier, esm, cjs) {
  const esmNames = Object.keys(esm).filter((name) => name !== "default").sort();
  const cjsNames = Object.keys(cjs).filter((name) => name !== "__esModule").sort();
  assert.ok(esmNames.length > 0, specifier + " exports something");
  assert.deepEqual(esmNames, cjsNames, specifier + ": the ESM and CJS builds export the same names");
  console.log("  " + specifier + ": " + esmNames.length + " exports");
}
`;
}

/** @param {{ subpaths: { specifier: string, requirable: boolean }[], packageName: string }} options */
export function consumerFiles({ subpaths, packageName }) {
  const specifiers = JSON.stringify(subpaths.filter((subpath) => subpath.requirable).map((subpath) => subpath.specifier));
  const esmOnly = JSON.stringify(subpaths.filter((subpath) => !subpath.requirable).map((subpath) => subpath.specifier));
  const main = JSON.stringify(packageName);
  const testing = JSON.stringify(`${packageName}/testing`);
  const expectedText = JSON.stringify("pong from the scripted runtime");

  const esm = `import assert from "node:assert/strict";
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
${exportNamesCheck()}${crossCopySource()}${turnSource()}
for (const specifier of ${specifiers}) checkSubpath(specifier, await import(specifier), require(specifier));
for (const specifier of ${esmOnly}) await checkEsmOnly(specifier);
await checkAcrossCopies(await import(${main}), require(${main}));
const result = await runTurn(await import(${main}), await import(${testing}));
assert.equal(result.stopReason, "end_turn");
assert.equal(result.text, ${expectedText});
console.log("esm consumer: ok");
`;

  const cjs = `"use strict";
const assert = require("node:assert/strict");
${exportNamesCheck()}${crossCopySource()}${turnSource()}
(async () => {
  for (const specifier of ${specifiers}) checkSubpath(specifier, await import(specifier), require(specifier));
  for (const specifier of ${esmOnly}) await checkEsmOnly(specifier);
  await checkAcrossCopies(await import(${main}), require(${main}));
  const result = await runTurn(require(${main}), require(${testing}));
  assert.equal(result.stopReason, "end_turn");
  assert.equal(result.text, ${expectedText});
  console.log("cjs consumer: ok");
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

  const jest = `"use strict";
${turnSource()}
test.each(${specifiers})("require(%s) loads under Jest", (specifier) => {
  expect(Object.keys(require(specifier)).length).toBeGreaterThan(0);
});

test("a turn against the scripted runtime", async () => {
  const result = await runTurn(require(${main}), require(${testing}));
  expect(result).toMatchObject({ stopReason: "end_turn", text: ${expectedText} });
});

test("errors the package throws are ToolrelayErrors", async () => {
  const main = require(${main});
  await expect(main.createSession({})).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
  await expect(main.createSession({})).rejects.toBeInstanceOf(main.ToolrelayError);
});
`;

  const importAll = subpaths.map((subpath, index) => `import * as surface${index} from ${JSON.stringify(subpath.specifier)};`).join("\n");
  const requireAll = subpaths
    .flatMap((subpath, index) => (subpath.requirable ? [`import surface${index} = require(${JSON.stringify(subpath.specifier)});`] : []))
    .join("\n");
  const surfaceList = subpaths.map((_, index) => `surface${index}`).join(", ");
  const typesEsm = `${importAll}
import { Session, Turn, ToolrelayError, isToolrelayError, type BackendOptions } from ${main};

export const surfaces = [${surfaceList}] as const;
export function codeOf(error: unknown): string | undefined {
  return isToolrelayError(error) ? error.code : error instanceof ToolrelayError ? error.code : undefined;
}

// What the session keeps to itself is not in the public types (stripInternal, private constructors).
export function internalsAreNotPublic(session: Session, turn: Turn): BackendOptions[] {
  // @ts-expect-error Session's constructor is private: createSession is the way in
  void new Session();
  // @ts-expect-error so is Turn's: Session.send is the way in
  void new Turn(async () => undefined);
  // @ts-expect-error Session.start is internal
  void session.start();
  // @ts-expect-error Turn.finish is internal
  turn.finish("end_turn");
  // @ts-expect-error Turn.push is internal
  turn.push({ type: "stop", stopReason: "end_turn" });
  // @ts-expect-error the test-only link backend is not a public backend
  return [{ kind: "link", link: {} }];
}
`;
  const requireList = subpaths.flatMap((subpath, index) => (subpath.requirable ? [`surface${index}`] : [])).join(", ");
  const typesCjs = `${requireAll}

export const surfaces = [${requireList}] as const;
`;
  const strict = {
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    target: "ES2022",
    lib: ["ES2022"],
    types: ["node"],
    noUncheckedIndexedAccess: true,
    // `tsc --init`'s default since TypeScript 5.9.
    exactOptionalPropertyTypes: true,
  };
  const tsconfig = (compilerOptions, files) =>
    `${JSON.stringify({ compilerOptions: { ...strict, ...compilerOptions }, files }, null, 2)}\n`;
  return {
    esm: { "consumer.mjs": esm },
    cjs: { "consumer.cjs": cjs },
    jest: { "consumer.test.js": jest },
    types: {
      "consumer.ts": typesEsm,
      "consumer-require.cts": typesCjs,
      "tsconfig.node16.json": tsconfig({ module: "node16", moduleResolution: "node16" }, ["consumer.ts", "consumer-require.cts"]),
      "tsconfig.bundler.json": tsconfig({ module: "ESNext", moduleResolution: "bundler" }, ["consumer.ts"]),
    },
  };
}
