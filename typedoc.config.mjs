// TypeDoc: the API reference in docs/api/ (generated, not committed: `npm run docs:api`; CI builds
// it with warnings as errors). One module per subpath of package.json `exports`, read from the
// source file behind it (dist/testing/index.d.ts ← src/testing/index.ts).
import { readFileSync } from "node:fs";

const manifest = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));
const entryPoints = Object.entries(manifest.exports)
  .filter(([key]) => key !== "./package.json" && !key.includes("*"))
  .map(([, target]) => (target.import?.types ?? target.types).replace(/^\.\/dist\//, "./src/").replace(/\.d\.ts$/, ".ts"));

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  name: manifest.name,
  entryPoints,
  tsconfig: "./tsconfig.typedoc.json",
  out: "./docs/api",
  readme: "none",
  excludeInternal: true,
  excludePrivate: true,
  excludeProtected: true,
  treatWarningsAsErrors: true,
  treatValidationWarningsAsErrors: true,
  validation: { notExported: true, invalidLink: true, rewrittenLink: true, notDocumented: true, unusedMergeModuleWith: true },
  // notDocumented: every exported declaration and every method has a comment; a property may go
  // without one when its name and type say it all (`toolName: string`).
  requiredToBeDocumented: ["Enum", "Variable", "Function", "Class", "Interface", "TypeAlias", "Method", "Accessor"],
  githubPages: false,
  hideGenerator: true,
  sourceLinkExternal: false,
  disableSources: true,
};
