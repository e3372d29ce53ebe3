#!/usr/bin/env node
// The package as a new user gets it. Builds, `npm pack`s, and installs the tarball into fresh
// temporary projects, then:
//   esm    plain ESM (`import`): every subpath loads, a real turn against the scripted runtime,
//          `instanceof ToolrelayError` across the ESM and CJS copies (both ways)
//   cjs    plain CommonJS (`require`): the same
//   jest   a Jest 30 test (CommonJS, Jest's own module system): every subpath, a real turn
//   types  a strict TypeScript consumer (`skipLibCheck: false`) under moduleResolution node16
//          (an ESM file and a CommonJS `.cts` file) and bundler, at the lowest zod of each major
//          the peer range allows (zod 3.25 and zod 4) and at the zod this repository develops with
//   zod3-esm, zod3-cjs  a project on the lowest zod 3 of the peer range (its `import { z } from
//          "zod"` is zod 3): a tool with a zod 3 schema, type-checked strictly and run, as an ES
//          module and as CommonJS (scripts/consumer/zod3-fixtures.mjs)
//   attw   @arethetypeswrong/cli on the tarball, profile node16 (node16 CJS + ESM, bundler)
//   publint on the unpacked tarball, strict
// Both published packages are packed (packages/toolrelay and packages/relay) and installed together,
// as a user installs `toolrelay` and `@toolrelay/relay`; subpaths come from each package.json
// `exports`, so a new subpath is covered without an edit here.
// Installs prefer the npm cache (`--prefer-offline`): jest, typescript, @types/node, zod and the
// other peers are pinned from this repository's devDependencies, so after `npm ci` they are
// usually in it (the lowest zod is fetched once).
//
// Usage: node scripts/consumer-test.mjs [--no-build] [--keep] [--only esm,cjs,jest,types,zod3-esm,zod3-cjs,attw,publint]
// Prints a matrix and exits non-zero when any check failed. Plain Node ESM, no dependencies.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { consumerFiles, subpathsOf } from "./consumer/fixtures.mjs";
import { zod3ConsumerFiles } from "./consumer/zod3-fixtures.mjs";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const only = args.includes("--only") ? args[args.indexOf("--only") + 1].split(",") : undefined;
const wanted = (name) => only === undefined || only.includes(name);
const readManifest = (folder) => JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8"));
/** The published packages, the SDK first (its peers and its `testing` subpath drive the projects). */
const PACKAGE_FOLDERS = ["packages/toolrelay", "packages/relay"];
const manifest = readManifest(PACKAGE_FOLDERS[0]);
const repositoryManifest = readManifest(".");
const subpaths = PACKAGE_FOLDERS.flatMap((folder) => subpathsOf(readManifest(folder)));
const lowestZods = lowestVersionsOf(manifest.peerDependencies.zod);
const lowestZod3 = lowestZods.find((version) => version.startsWith("3."));
const currentZod = repositoryManifest.devDependencies.zod;
const dev = (name) => repositoryManifest.devDependencies[name];
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const started = Date.now();
/** @type {{ project: string, check: string, ok: boolean, seconds: string, detail?: string }[]} */
const results = [];

/** The lowest version of each alternative of a peer range: `^3.25.76 || ^4.0.16` → `["3.25.76", "4.0.16"]`. */
function lowestVersionsOf(range) {
  return range.split("||").map((alternative) => {
    const match = /^\^?(\d+\.\d+\.\d+)$/.exec(alternative.trim());
    if (!match) throw new Error(`consumer-test: cannot read the lowest version of the peer range "${range}" (expected ^x.y.z || ^x.y.z)`);
    return match[1];
  });
}

function run(command, commandArgs, cwd, env = {}) {
  const result = spawnSync(command, commandArgs, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", npm_config_update_notifier: "false", ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ok: result.status === 0, output: `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ? String(result.error) : ""}` };
}

function check(project, name, action) {
  const begin = Date.now();
  let outcome;
  try {
    outcome = action();
  } catch (error) {
    outcome = { ok: false, output: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  const seconds = ((Date.now() - begin) / 1000).toFixed(1);
  results.push({ project, check: name, ok: outcome.ok, seconds, detail: outcome.ok ? undefined : outcome.output });
  console.log(`${outcome.ok ? "ok  " : "FAIL"} ${project.padEnd(8)} ${name} (${seconds} s)`);
  if (!outcome.ok) console.log(indent(outcome.output));
  return outcome.ok;
}

function indent(text) {
  const lines = text.trim().split("\n");
  const shown = lines.length > 80 ? [...lines.slice(0, 80), `… ${lines.length - 80} more lines`] : lines;
  return shown.map((line) => `       ${line}`).join("\n");
}

function install(dir, packages) {
  return run(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--save-exact", ...packages], dir);
}

function writeProject(dir, files) {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
}

if (!args.includes("--no-build")) {
  const built = run(npm, ["run", "build"], root);
  if (!built.ok) {
    console.error(`consumer-test: the build failed\n${built.output}`);
    process.exit(1);
  }
}
const workspace = mkdtempSync(join(tmpdir(), "toolrelay-consumer-"));
try {
  const tarballs = PACKAGE_FOLDERS.map((folder) => {
    // The JSON is on stdout; the prepack script's echo goes to stderr, after it in `output`.
    const packed = run(npm, ["pack", "--json", "--pack-destination", workspace], join(root, folder));
    if (!packed.ok) throw new Error(`npm pack (${folder}) failed\n${packed.output}`);
    return join(workspace, JSON.parse(packed.output.slice(packed.output.indexOf("[\n"), packed.output.lastIndexOf("\n]") + 2))[0].filename);
  });
  const files = consumerFiles({ subpaths, packageName: manifest.name });
  console.log(
    `consumer-test: ${tarballs.join(", ")}\n  subpaths: ${subpaths.map((s) => s.specifier).join(", ")}\n  zod: ${lowestZods.join(", ")} (lowest of the peer range) and ${currentZod}`,
  );
  // Every peer (optional ones too: a subpath may need one), at the version this repository
  // develops with, or the peer range when it is not a devDependency.
  const otherPeers = Object.entries(manifest.peerDependencies)
    .filter(([name]) => name !== "zod")
    .map(([name, range]) => `${name}@${dev(name) ?? range}`);
  const runtimePeers = [`zod@${currentZod}`, ...otherPeers];

  for (const [project, type] of [
    ["esm", "module"],
    ["cjs", "commonjs"],
  ]) {
    if (!wanted(project)) continue;
    const dir = join(workspace, project);
    writeProject(dir, { "package.json": JSON.stringify({ name: `consumer-${project}`, private: true, type }, null, 2), ...files[project] });
    if (!check(project, "npm install <tarball>", () => install(dir, [...tarballs, ...runtimePeers]))) continue;
    check(project, `import every subpath, a turn, instanceof across ESM/CJS`, () =>
      run(process.execPath, [Object.keys(files[project])[0]], dir),
    );
  }

  if (wanted("jest")) {
    const dir = join(workspace, "jest");
    writeProject(dir, {
      "package.json": JSON.stringify({ name: "consumer-jest", private: true, scripts: { test: "jest --ci" } }, null, 2),
      ...files.jest,
    });
    if (check("jest", "npm install <tarball> jest", () => install(dir, [...tarballs, ...runtimePeers, `jest@${dev("jest")}`]))) {
      check("jest", "Jest 30: require every subpath, a turn", () => run(npm, ["test", "--silent"], dir));
    }
  }

  if (wanted("types")) {
    const dir = join(workspace, "types");
    writeProject(dir, {
      "package.json": JSON.stringify({ name: "consumer-types", private: true, type: "module" }, null, 2),
      ...files.types,
    });
    const tools = [`typescript@${dev("typescript")}`, `@types/node@${dev("@types/node")}`, ...otherPeers];
    for (const zod of [...lowestZods, currentZod]) {
      if (!check("types", `npm install <tarball> zod@${zod}`, () => install(dir, [...tarballs, `zod@${zod}`, ...tools]))) continue;
      for (const config of ["tsconfig.node16.json", "tsconfig.bundler.json"]) {
        check("types", `tsc strict, skipLibCheck false, ${config.split(".")[1]}, zod ${zod}`, () =>
          run(process.execPath, [join(dir, "node_modules", "typescript", "bin", "tsc"), "-p", config], dir),
        );
      }
    }
  }

  const zod3Files = zod3ConsumerFiles({ packageName: manifest.name });
  for (const [project, type] of [
    ["zod3-esm", "module"],
    ["zod3-cjs", "commonjs"],
  ]) {
    if (!wanted(project) || lowestZod3 === undefined) continue;
    const dir = join(workspace, project);
    const { run: output, ...projectFiles } = zod3Files[project];
    writeProject(dir, { "package.json": JSON.stringify({ name: `consumer-${project}`, private: true, type }, null, 2), ...projectFiles });
    const tools = [`typescript@${dev("typescript")}`, `@types/node@${dev("@types/node")}`];
    if (
      !check(project, `npm install <tarball> zod@${lowestZod3}`, () =>
        install(dir, [...tarballs, `zod@${lowestZod3}`, ...otherPeers, ...tools]),
      )
    )
      continue;
    if (
      !check(project, `tsc strict, skipLibCheck false, node16, zod ${lowestZod3}`, () =>
        run(process.execPath, [join(dir, "node_modules", "typescript", "bin", "tsc"), "-p", "."], dir),
      )
    )
      continue;
    check(project, "a tool with a zod 3 schema: its JSON Schema, validation, a turn that calls it", () =>
      run(process.execPath, [output], dir),
    );
  }

  if (wanted("attw")) {
    // The subpaths with a `require` condition under the node16 profile (node16 CJS and ESM,
    // bundler); the ESM-only ones (no `require` condition, e.g. toolrelay/acp) under esm-only.
    const attw = (packed, profile, entrypoints) => () =>
      run(
        process.execPath,
        [
          join(root, "node_modules", "@arethetypeswrong", "cli", "dist", "index.js"),
          packed,
          "--profile",
          profile,
          "--format",
          "table-flipped",
          "--entrypoints",
          ...entrypoints,
        ],
        root,
      );
    PACKAGE_FOLDERS.forEach((folder, index) => {
      const own = subpathsOf(readManifest(folder));
      const name = readManifest(folder).name;
      const requirable = own.filter((subpath) => subpath.requirable).map((subpath) => subpath.key);
      const esmOnly = own.filter((subpath) => !subpath.requirable).map((subpath) => subpath.key);
      check(
        "attw",
        `${name}: attw --profile node16 (node16 CJS/ESM, bundler): ${requirable.join(" ")}`,
        attw(tarballs[index], "node16", requirable),
      );
      if (esmOnly.length > 0) {
        check(
          "attw",
          `${name}: attw --profile esm-only (node16 ESM, bundler): ${esmOnly.join(" ")}`,
          attw(tarballs[index], "esm-only", esmOnly),
        );
      }
    });
  }

  if (wanted("publint")) {
    PACKAGE_FOLDERS.forEach((folder, index) => {
      const dir = join(workspace, `unpacked-${index}`);
      mkdirSync(dir);
      const unpacked = run("tar", ["-xzf", tarballs[index], "-C", dir], root);
      check("publint", `${readManifest(folder).name}: publint --strict (the unpacked tarball)`, () =>
        unpacked.ok
          ? publintOutcome(
              run(
                process.execPath,
                [join(root, "node_modules", "publint", "src", "cli.js"), join(dir, "package"), "--strict", "--pack", "false"],
                root,
              ),
            )
          : unpacked,
      );
    });
  }
} finally {
  if (args.includes("--keep")) console.log(`consumer-test: kept ${workspace}`);
  else rmSync(workspace, { recursive: true, force: true });
}

// publint exits 0 on suggestions; --strict makes warnings fail, and a suggestion counts here too.
function publintOutcome(outcome) {
  return { ok: outcome.ok && !/Suggestions?:|Warnings?:|Errors?:/.test(outcome.output), output: outcome.output };
}

const failed = results.filter((result) => !result.ok);
console.log(`\nconsumer-test matrix (${((Date.now() - started) / 1000).toFixed(0)} s):`);
for (const result of results) console.log(`  ${result.ok ? "pass" : "FAIL"}  ${result.project.padEnd(8)} ${result.check}`);
console.log(`${results.length - failed.length} passed, ${failed.length} failed`);
if (results.length === 0) {
  console.error("consumer-test: no check ran");
  process.exit(1);
}
process.exit(failed.length === 0 ? 0 : 1);
