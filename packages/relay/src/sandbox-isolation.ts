/**
 * The command line that starts one sandbox's listener. With `"namespace"` isolation the listener
 * runs under util-linux `unshare` in its own user, mount and PID namespaces: a shell script mounts
 * a fresh tmpfs as the root, binds the system directories and `readOnlyPaths` read-only and the
 * sandbox's own directories read-write (each at its own path), mounts a fresh `/proc` and binds
 * `/dev`, then `chroot`s into it and starts the listener in the workspace. Nothing else of the
 * host's filesystem exists in there. The mounts live only in the sandbox's namespace (private
 * propagation): the relay sees the root as an empty directory.
 *
 * Both modes run under `setpriv --pdeathsig KILL` when it is installed, so a sandbox dies with a
 * relay that is killed; `--kill-child` takes the namespace with it.
 */
import { existsSync, lstatSync, realpathSync } from "node:fs";
import type { SandboxIsolation } from "./sandbox-options.js";

/** System directories every sandbox sees, read-only (a symlinked one, e.g. `/bin → usr/bin`, is recreated as the link). */
export const SYSTEM_PATHS = ["/usr", "/etc", "/bin", "/lib", "/lib64", "/sbin"] as const;

/** A sandbox's directories (absolute, real paths). */
export interface SandboxLayout {
  /** Empty directory the namespace mounts its root on. */
  root: string;
  home: string;
  workspace: string;
  tmp: string;
  /** The tenant's shared state directory, when configured. */
  sharedState: string | undefined;
}

const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"].find((path) => existsSync(path)) ?? "unshare";

export interface SandboxCommand {
  file: string;
  args: string[];
}

/**
 * `$0` = label; then: root, workspace, whether the sandbox's environment has a PATH (`set` /
 * `unset`), the number of read-only paths and each, the number of read-write paths and each,
 * then the listener's command and arguments. The shell's own variables never reach the listener:
 * PATH is restored (or removed) and the `PWD` dash exports is dropped by the final `env`.
 */
const ISOLATION_SCRIPT = `set -eu
saved_path=${"$"}{PATH-}
PATH=/usr/sbin:/usr/bin:/sbin:/bin
root="$1"; workspace="$2"; path_state="$3"; shift 3
mount -t tmpfs -o mode=0755 toolrelay-sandbox "$root"
count="$1"; shift
while [ "$count" -gt 0 ]; do
  source="$1"; shift; count=$((count - 1))
  if [ -L "$source" ]; then
    mkdir -p "$root$(dirname "$source")"
    ln -s "$(readlink "$source")" "$root$source"
  elif [ -e "$source" ]; then
    if [ -d "$source" ]; then mkdir -p "$root$source"; else mkdir -p "$root$(dirname "$source")"; : > "$root$source"; fi
    mount --rbind "$source" "$root$source"
    mount -o remount,bind,ro "$root$source"
  fi
done
count="$1"; shift
while [ "$count" -gt 0 ]; do
  source="$1"; shift; count=$((count - 1))
  mkdir -p "$root$source"
  mount --bind "$source" "$root$source"
done
mkdir -p "$root/proc" "$root/dev" "$root/tmp"
chmod 1777 "$root/tmp"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
chroot_binary=$(command -v chroot)
PATH=$saved_path
if [ "$path_state" = set ]; then path_option=""; else path_option="PATH"; fi
exec "$chroot_binary" "$root" /usr/bin/env -u PWD -u OLDPWD ${"$"}{path_option:+-u "$path_option"} -C "$workspace" "$@"
`;

/** The paths a read-only bind needs: each given path, and its real path when a symlink leads elsewhere. */
export function readOnlyMounts(paths: readonly string[]): string[] {
  const mounts = new Set<string>();
  for (const path of [...SYSTEM_PATHS, ...paths]) {
    if (!existsSync(path) && !isSymlink(path)) continue;
    mounts.add(path);
    if (!(SYSTEM_PATHS as readonly string[]).includes(path)) {
      const real = realpathSync(path);
      if (real !== path) mounts.add(real);
    }
  }
  return [...mounts];
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The command that runs `listener` (absolute command + args) in a sandbox laid out as `layout`. */
export function sandboxCommand(
  isolation: SandboxIsolation,
  layout: SandboxLayout,
  readOnlyPaths: readonly string[],
  listener: readonly string[],
  env: Readonly<Record<string, string>>,
  setprivAvailable = existsSync("/usr/bin/setpriv"),
): SandboxCommand {
  const guarded = (command: string[]): SandboxCommand => {
    const full = setprivAvailable ? ["/usr/bin/setpriv", "--pdeathsig", "KILL", "--", ...command] : command;
    return { file: full[0]!, args: full.slice(1) };
  };
  if (isolation === "none") return guarded([...listener]);
  const readOnly = readOnlyMounts(readOnlyPaths);
  const writable = [layout.home, layout.workspace, layout.tmp, ...(layout.sharedState ? [layout.sharedState] : [])];
  return guarded([
    UNSHARE,
    "--user",
    "--map-root-user",
    "--mount",
    "--propagation",
    "private",
    "--pid",
    "--fork",
    "--kill-child",
    "/bin/sh",
    "-c",
    ISOLATION_SCRIPT,
    "toolrelay-sandbox",
    layout.root,
    layout.workspace,
    env.PATH === undefined ? "unset" : "set",
    String(readOnly.length),
    ...readOnly,
    String(writable.length),
    ...writable,
    ...listener,
  ]);
}
