#!/usr/bin/env node
// The public API surface, one report per entry point, checked in under api/ so that a change of
// the surface is a reviewed diff. API Extractor reads the built declaration files (dist/*.d.ts:
// what users get) of every subpath in package.json `exports`, so a new subpath gets a report.
//
//   node scripts/api-report.mjs            check: fails when a report differs from the build
//   node scripts/api-report.mjs --update   rewrite the reports (npm run api:update)
//   --no-build                             use dist/ as it is (after `npm run build`)
//
// A failing check prints the diff; run `npm run api:update`, review the change to api/*.api.md
// and commit it with the code that changed the surface.
//
// The declaration bundler names shared chunks with a content hash (dist/session-c_ye2b2u.d.ts),
// and API Extractor's warnings name the chunk with a line and column. Both change with any edit
// elsewhere in the chunk, so the committed report names the chunk without its hash and without
// the position: `// dist/session.d.ts - (ae-undocumented) Missing documentation for "kind".`
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const { Extractor, ExtractorConfig } = require("@microsoft/api-extractor");
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const update = process.argv.includes("--update");
/** The published packages (npm workspaces); each subpath of each gets a report. */
export const PUBLISHED_PACKAGES = ["packages/toolrelay", "packages/relay"];

/** Every subpath of `exports` with its ESM declaration file and its report's name. */
export function entryPoints(packageManifest) {
  return Object.entries(packageManifest.exports)
    .filter(([key]) => key !== "./package.json" && !key.includes("*"))
    .map(([key, target]) => {
      const types = target.import?.types ?? target.types;
      if (typeof types !== "string") throw new Error(`api-report: exports["${key}"] names no types`);
      const base = packageManifest.name.replace(/^@/, "").replace("/", "-");
      const name = key === "." ? base : `${base}-${key.slice(2).replaceAll("/", "-")}`;
      return { key, types, reportFileName: name };
    });
}

if (!process.argv.includes("--no-build")) {
  const built = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "build"], { cwd: root, encoding: "utf8" });
  if (built.status !== 0) {
    console.error(`api-report: the build failed\n${built.stdout}${built.stderr}`);
    process.exit(1);
  }
}

const temp = mkdtempSync(join(tmpdir(), "toolrelay-api-report-"));
mkdirSync(join(temp, "reports"));
const failures = [];
try {
  for (const packageFolder of PUBLISHED_PACKAGES) {
    const folder = join(root, packageFolder);
    const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
    for (const entry of entryPoints(manifest)) {
      const mainEntryPointFilePath = join(folder, entry.types);
      if (!existsSync(mainEntryPointFilePath))
        throw new Error(`api-report: ${packageFolder}/${entry.types} is missing: run \`npm run build\``);
      const config = ExtractorConfig.prepare({
        configObjectFullPath: undefined,
        packageJsonFullPath: join(folder, "package.json"),
        configObject: {
          projectFolder: folder,
          mainEntryPointFilePath,
          compiler: {
            overrideTsconfig: {
              compilerOptions: {
                target: "ES2022",
                lib: ["ES2022", "ESNext.Disposable"],
                module: "NodeNext",
                moduleResolution: "NodeNext",
                types: ["node"],
                strict: true,
                skipLibCheck: true,
              },
              files: [mainEntryPointFilePath],
            },
          },
          apiReport: {
            enabled: true,
            reportFileName: entry.reportFileName,
            reportFolder: join(temp, "reports"),
            reportTempFolder: temp,
            includeForgottenExports: false,
          },
          docModel: { enabled: false },
          dtsRollup: { enabled: false },
          tsdocMetadata: { enabled: false },
          newlineKind: "lf",
          messages: {
            compilerMessageReporting: { default: { logLevel: "error" } },
            extractorMessageReporting: {
              default: { logLevel: "warning", addToApiReportFile: true },
              // Release tags (@public/@beta) are not used: everything exported is public.
              "ae-missing-release-tag": { logLevel: "none", addToApiReportFile: false },
              // A type in a public signature that no entry point exports: listed in the report
              // (a "Warning:" line), so exporting it or removing it shows up as a diff.
              "ae-forgotten-export": { logLevel: "none", addToApiReportFile: true },
              "ae-internal-missing-underscore": { logLevel: "none", addToApiReportFile: false },
            },
            tsdocMessageReporting: { default: { logLevel: "none", addToApiReportFile: false } },
          },
        },
      });
      const result = Extractor.invoke(config, {
        // Always written to the temporary folder; the comparison with api/ is done below, on the
        // normalized text.
        localBuild: true,
        showVerboseMessages: false,
        printApiReportDiff: false,
        messageCallback(message) {
          // The bundled compiler is the TypeScript this repository uses (5.9); say nothing about it.
          if (message.messageId === "console-compiler-version-notice") message.logLevel = "none";
          // The report is written to the temporary folder first; this script says what it did with it.
          if (message.messageId.startsWith("console-api-report")) message.logLevel = "none";
        },
      });
      const report = `api/${entry.reportFileName}.api.md`;
      const built = join(temp, "reports", `${entry.reportFileName}.api.md`);
      if (!result.succeeded || !existsSync(built)) {
        failures.push(report);
        console.error(`api-report: ${report} failed (${result.errorCount} errors, ${result.warningCount} warnings)`);
        continue;
      }
      const fresh = normalizeReport(readFileSync(built, "utf8"));
      const committedPath = join(root, report);
      const committed = existsSync(committedPath) ? readFileSync(committedPath, "utf8") : "";
      if (fresh === committed) {
        console.log(`api-report: ${report} up to date`);
      } else if (update) {
        writeFileSync(committedPath, fresh);
        console.log(`api-report: ${report} updated`);
      } else {
        failures.push(report);
        printDiff(report, committed, fresh);
        console.error(`api-report: ${report} differs from the built surface`);
      }
    }
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.error(`\napi-report: ${failures.length} report(s) differ. Review the change, then \`npm run api:update\` and commit api/.`);
  process.exit(1);
}

/** The report without the chunk hashes and warning positions (see the top of this file). */
export function normalizeReport(text) {
  return text
    .replace(/dist\/([\w/.-]+?)-[A-Za-z0-9_-]{8}(\.d\.c?ts)(?::\d+:\d+)?/g, "dist/$1$2")
    .replace(/(dist\/[\w/.-]+\.d\.c?ts):\d+:\d+/g, "$1");
}

/** The lines only one side has, in order (a report is short enough for a plain walk). */
function printDiff(report, before, after) {
  const afterLines = new Set(after.split("\n"));
  const beforeLines = new Set(before.split("\n"));
  const lines = [
    ...before
      .split("\n")
      .filter((line) => !afterLines.has(line))
      .map((line) => `- ${line}`),
    ...after
      .split("\n")
      .filter((line) => !beforeLines.has(line))
      .map((line) => `+ ${line}`),
  ];
  console.error(`--- ${report} (committed)\n+++ ${report} (built)\n${lines.join("\n")}`);
}
