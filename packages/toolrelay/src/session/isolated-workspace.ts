import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where isolated workspaces live: `<tmpdir>/toolrelay-workspaces/<pid>-<random>`. */
export function workspacesRoot(): string {
  return join(tmpdir(), "toolrelay-workspaces");
}

export interface IsolatedWorkspace {
  path: string;
  remove(): Promise<void>;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Remove workspaces left by processes that no longer run (crashed sessions). Returns how many were removed. */
export async function sweepStaleWorkspaces(root = workspacesRoot()): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(root);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of entries) {
    const pid = Number.parseInt(name.split("-")[0] ?? "", 10);
    if (!Number.isInteger(pid) || pid <= 0 || (pid !== process.pid && isAlive(pid))) continue;
    if (pid === process.pid) continue;
    await rm(join(root, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/** A fresh, empty scratch directory for the runtime's `cwd`, removed by `remove()`. */
export async function createIsolatedWorkspace(root = workspacesRoot()): Promise<IsolatedWorkspace> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  await sweepStaleWorkspaces(root);
  const path = await mkdtemp(join(root, `${process.pid}-`));
  return {
    path,
    remove: () => rm(path, { recursive: true, force: true }),
  };
}
