/**
 * The session's working roots, and the one check every editor path goes
 * through before a request reaches the editor.
 *
 * A path is accepted only when it is
 * - a non-empty string without a NUL character, at most `maxPathLength` long;
 * - absolute (a relative path is refused, never resolved against some cwd);
 * - inside a root after `.` and `..` are resolved lexically (`path.resolve`);
 *   containment is by whole segments, so `/srv/root-evil/x` is not inside
 *   `/srv/root`; percent-encoded dots (`%2e%2e`) are literal file names;
 * - still inside a root (compared with the roots' own real paths) after
 *   symbolic links are resolved with `realpath` for the part of the path that
 *   exists on disk. The part that does not exist yet (a new file, an unsaved
 *   buffer) is appended as is. A dangling symbolic link or a link loop is
 *   refused: where it points cannot be known.
 *
 * The accepted path is the lexically normalized one (not the real path): it is
 * what the editor knows its buffers by.
 *
 * Limits: the check runs when the tool's input is validated, so a symbolic
 * link created between the check and the editor's own file access is not seen
 * (the editor resolves the path itself). Comparisons are case-sensitive, so on
 * a case-insensitive file system a differently cased path may be refused; it
 * is never let out.
 */
import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import { ToolrelayError } from "../errors.js";

/** The file-system calls the check needs (injectable for tests). */
export interface PathFileSystem {
  /** `fs.realpathSync.native`: throws an error with `code` (`ENOENT`, `ENOTDIR`, `ELOOP`, ...) when it cannot resolve. */
  realpath(target: string): string;
  /** Whether `target` itself (not what it points to) is a symbolic link; `undefined` when nothing is there. */
  isSymbolicLink(target: string): boolean | undefined;
}

/** The real file system. */
export const nodePathFileSystem: PathFileSystem = {
  realpath: (target) => realpathSync.native(target),
  isSymbolicLink(target) {
    try {
      const stats = lstatSync(target, { throwIfNoEntry: false });
      return stats === undefined ? undefined : stats.isSymbolicLink();
    } catch {
      return undefined;
    }
  },
};

/** The result of {@link WorkingRoots.check}. */
export type EditorPathCheck = { ok: true; path: string } | { ok: false; reason: string };

/** Options of `WorkingRoots`. */
export interface WorkingRootsOptions {
  /** Longest path accepted, in characters. Default 4_096. */
  maxPathLength?: number | undefined;
  /** File-system calls. Default: the real file system (`node:fs`). */
  fileSystem?: PathFileSystem | undefined;
}

/** The working roots of one ACP session: its `cwd` and its `additionalDirectories`. */
export class WorkingRoots {
  /** The roots, absolute and normalized, in the order given (duplicates removed). */
  readonly roots: readonly string[];
  #realRoots: readonly string[];
  #maxPathLength: number;
  #fileSystem: PathFileSystem;

  /** Throws `ToolrelayError("INVALID_OPTIONS")` for no roots, or a root that is not an absolute path. */
  constructor(roots: readonly string[], options: WorkingRootsOptions = {}) {
    this.#maxPathLength = options.maxPathLength ?? 4_096;
    this.#fileSystem = options.fileSystem ?? nodePathFileSystem;
    if (roots.length === 0) throw new ToolrelayError("INVALID_OPTIONS", "an ACP session needs at least one working root (its cwd)");
    const normalized: string[] = [];
    for (const root of roots) {
      if (typeof root !== "string" || root === "" || root.includes("\0") || !path.isAbsolute(root)) {
        throw new ToolrelayError("INVALID_OPTIONS", `working root ${JSON.stringify(root)} must be an absolute path`);
      }
      const resolved = path.resolve(root);
      if (!normalized.includes(resolved)) normalized.push(resolved);
    }
    this.roots = Object.freeze(normalized);
    this.#realRoots = Object.freeze(
      normalized.map((root) => {
        const real = this.#realPath(root);
        // A root that cannot be resolved (a dangling link) only matches itself, lexically.
        return real.ok ? real.path : root;
      }),
    );
  }

  /** The roots, for messages: `/a/b` or `/a/b, /c`. */
  describe(): string {
    return this.roots.join(", ");
  }

  /** Check one path (see the module comment). Never throws. */
  check(candidate: unknown): EditorPathCheck {
    if (typeof candidate !== "string") return refuse("the path must be a string");
    if (candidate === "") return refuse("the path is empty");
    if (candidate.includes("\0")) return refuse("the path contains a NUL character");
    if (candidate.length > this.#maxPathLength) return refuse(`the path is longer than ${this.#maxPathLength} characters`);
    if (!path.isAbsolute(candidate)) {
      return refuse(`the path must be absolute, e.g. ${path.join(this.roots[0]!, "src", "index.ts")}; got a relative path`);
    }
    const resolved = path.resolve(candidate);
    if (!this.roots.some((root) => isInside(root, resolved))) {
      return refuse(`${resolved} is outside the session's working roots (${this.describe()})`);
    }
    const real = this.#realPath(resolved);
    if (!real.ok) return real;
    if (!this.#realRoots.some((root) => isInside(root, real.path))) {
      return refuse(`${resolved} leads outside the session's working roots through a symbolic link (it resolves to ${real.path})`);
    }
    return { ok: true, path: resolved };
  }

  /** realpath of the longest existing prefix, with the rest appended. */
  #realPath(resolved: string): EditorPathCheck {
    const missing: string[] = [];
    let current = resolved;
    for (;;) {
      try {
        const real = this.#fileSystem.realpath(current);
        return { ok: true, path: missing.length === 0 ? real : path.join(real, ...missing.reverse()) };
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (code === "ELOOP") return refuse(`${resolved} goes through a symbolic link loop`);
        if (code !== "ENOENT" && code !== "ENOTDIR") {
          return refuse(`${resolved} could not be checked (${typeof code === "string" ? code : "unknown error"})`);
        }
        if (this.#fileSystem.isSymbolicLink(current) === true) {
          return refuse(`${current} is a symbolic link whose target does not exist, so where it leads cannot be checked`);
        }
        const parent = path.dirname(current);
        if (parent === current) return { ok: true, path: path.join(current, ...missing.reverse()) };
        missing.push(path.basename(current));
        current = parent;
      }
    }
  }
}

/** `target` is `root` or below it, by whole path segments. Both must be normalized absolute paths. */
export function isInside(root: string, target: string): boolean {
  if (target === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return target.startsWith(prefix);
}

function refuse(reason: string): EditorPathCheck {
  return { ok: false, reason };
}
