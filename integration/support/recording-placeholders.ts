/**
 * What a recording of the real peer must not keep: the names of the recording machine's folders.
 * The peer's random temporary HOME, the repository's folder (the peer's skill paths name it, also
 * through the real path of a symbolic-linked `test/letta-peer/node_modules`) and the peer's own
 * random temporary folders become fixed placeholders, so a re-recording names no machine and
 * diffs less. `npm run check:references` accepts exactly these placeholders.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The peer's temporary HOME (its cwd). */
export const HOME_PLACEHOLDER = "/tmp/toolrelay-letta-home-XXXXXX";
/** The repository's folder. */
export const REPOSITORY_PLACEHOLDER = "<repository>";

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const peerModules = `${repositoryRoot}/test/letta-peer/node_modules`;
/** The peer's background-task folders (`letta-background-<random>` in the temporary folder). */
const peerTemporaryFolder = /\/tmp\/letta-background-[A-Za-z0-9]+/g;

/** `text` with every machine folder replaced by its placeholder. */
export function replaceMachinePaths(text: string, home: string): string {
  let result = text.split(home).join(HOME_PLACEHOLDER);
  const realModules = realPath(peerModules);
  if (realModules !== peerModules) result = result.split(realModules).join(`${REPOSITORY_PLACEHOLDER}/test/letta-peer/node_modules`);
  return result.split(repositoryRoot).join(REPOSITORY_PLACEHOLDER).replace(peerTemporaryFolder, "/tmp/letta-background-XXXXXX");
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
