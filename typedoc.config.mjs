// TypeDoc: the API reference in docs/api/ (generated, not committed: `npm run docs:api`; CI builds
// it with warnings as errors). One module per subpath of package.json `exports`, read from the
// source file behind it (packages/toolrelay/dist/testing/index.d.ts ← packages/toolrelay/src/testing/index.ts),
// for both published packages (the SDK and the relay).
import { readFileSync } from "node:fs";

const packageFolders = ["packages/toolrelay", "packages/relay"];
const manifestOf = (folder) => JSON.parse(readFileSync(new URL(`./${folder}/package.json`, import.meta.url), "utf8"));
const entryPoints = packageFolders.flatMap((folder) =>
  Object.entries(manifestOf(folder).exports)
    .filter(([key]) => key !== "./package.json" && !key.includes("*"))
    .map(([, target]) => `./${folder}/${(target.import?.types ?? target.types).replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts")}`),
);

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  name: manifestOf("packages/toolrelay").name,
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
