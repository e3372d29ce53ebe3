/**
 * Path containment of the editor tools: hand-written traversal cases against a
 * real directory tree with symbolic links, and a property over generated paths
 * checked by an independent resolver (lstat/readlink, one component at a time):
 * no accepted path may resolve outside the root.
 */
import { lstatSync, mkdirSync, mkdtempSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isInside, WorkingRoots } from "../../packages/toolrelay/src/acp/working-roots.js";

let base: string;
let root: string;
let root2: string;
let roots: WorkingRoots;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), "toolrelay-roots-")));
  root = path.join(base, "root");
  root2 = path.join(base, "root2");
  for (const dir of ["root/sub/deeper", "root-evil", "outside", "root2", "root2-evil"])
    mkdirSync(path.join(base, dir), { recursive: true });
  writeFileSync(path.join(root, "notes.md"), "notes\n");
  writeFileSync(path.join(root, "sub", "inner.txt"), "inner\n");
  writeFileSync(path.join(base, "root-evil", "secret.txt"), "secret\n");
  writeFileSync(path.join(base, "outside", "secret.txt"), "secret\n");
  writeFileSync(path.join(root2, "other.txt"), "other\n");
  const link = (target: string, at: string) => symlinkSync(target, path.join(root, at));
  link("sub", "link-in");
  link(path.join(root, "sub"), "link-in-abs");
  link(".", "link-self");
  link("../outside", "link-out");
  link(path.join(base, "outside"), "link-out-abs");
  link("../outside/secret.txt", "link-out-file");
  link("../outside/missing.txt", "link-dangling");
  link("missing-inside.txt", "link-dangling-in");
  link("..", "link-up");
  link("loop-b", "loop-a");
  link("loop-a", "loop-b");
  link("../..", path.join("sub", "link-back-up"));
  link("../../root-evil", path.join("sub", "link-sibling"));
  link("../root2", "link-root2");
  roots = new WorkingRoots([root]);
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

describe("WorkingRoots.check: hand-written cases", () => {
  const accepted: Array<[string, () => string, () => string]> = [
    ["a file in the root", () => `${root}/notes.md`, () => `${root}/notes.md`],
    ["a file in a subfolder", () => `${root}/sub/inner.txt`, () => `${root}/sub/inner.txt`],
    ["a new file (not on disk: an unsaved buffer)", () => `${root}/new-file.ts`, () => `${root}/new-file.ts`],
    ["a new file in new folders", () => `${root}/new/deep/file.ts`, () => `${root}/new/deep/file.ts`],
    ["`..` that stays inside", () => `${root}/sub/../notes.md`, () => `${root}/notes.md`],
    ["`.` segments", () => `${root}/./sub/./inner.txt`, () => `${root}/sub/inner.txt`],
    ["repeated slashes", () => `${root}//sub///inner.txt`, () => `${root}/sub/inner.txt`],
    ["encoded dots are a literal name", () => `${root}/%2e%2e/secret.txt`, () => `${root}/%2e%2e/secret.txt`],
    ["upper-case encoded dots too", () => `${root}/%2E%2E/%2E%2E/x`, () => `${root}/%2E%2E/%2E%2E/x`],
    ["an encoded slash is a literal name", () => `${root}/..%2fsecret.txt`, () => `${root}/..%2fsecret.txt`],
    ["three dots are a name", () => `${root}/.../x`, () => `${root}/.../x`],
    ["backslashes are literal on POSIX", () => `${root}/a\\..\\..\\x`, () => `${root}/a\\..\\..\\x`],
    ["a symbolic link inside the root", () => `${root}/link-in/inner.txt`, () => `${root}/link-in/inner.txt`],
    ["an absolute symbolic link inside the root", () => `${root}/link-in-abs/inner.txt`, () => `${root}/link-in-abs/inner.txt`],
    ["a link to the root itself", () => `${root}/link-self/notes.md`, () => `${root}/link-self/notes.md`],
    ["the root itself", () => root, () => root],
    ["the root with a trailing slash", () => `${root}/`, () => root],
    ["`..` back to the root", () => `${root}/sub/..`, () => root],
    [
      "`..` after a link is resolved lexically (the path sent names the root's file)",
      () => `${root}/link-out/../notes.md`,
      () => `${root}/notes.md`,
    ],
    ["a name starting with dots", () => `${root}/..hidden`, () => `${root}/..hidden`],
  ];
  for (const [name, input, expected] of accepted) {
    it(`accepts ${name}`, () => {
      expect(roots.check(input())).toEqual({ ok: true, path: expected() });
    });
  }

  const refused: Array<[string, () => unknown, RegExp]> = [
    ["an empty path", () => "", /empty/],
    ["a relative path", () => "notes.md", /absolute/],
    ["a ./ relative path", () => "./notes.md", /absolute/],
    ["a ../ relative path", () => "../root/notes.md", /absolute/],
    ["a ~ path", () => "~/notes.md", /absolute/],
    ["`..` out of the root", () => `${root}/../outside/secret.txt`, /outside the session's working roots/],
    ["`..` into a sibling with the root's name as prefix", () => `${root}/../root-evil/secret.txt`, /outside/],
    ["a sibling with the root's name as prefix", () => `${root}-evil/secret.txt`, /outside/],
    ["the sibling folder itself", () => `${root}-evil`, /outside/],
    ["two `..` from a subfolder", () => `${root}/sub/../../outside/secret.txt`, /outside/],
    ["many `..`", () => `${root}/../../../../../etc/passwd`, /outside/],
    ["an unrelated absolute path", () => "/etc/passwd", /outside/],
    ["the file-system root", () => "/", /outside/],
    ["the root's parent", () => base, /outside/],
    ["a NUL character", () => `${root}/notes.md\0.png`, /NUL/],
    ["a NUL character alone", () => "\0", /NUL/],
    ["a symbolic link to a folder outside", () => `${root}/link-out/secret.txt`, /symbolic link/],
    ["an absolute symbolic link outside", () => `${root}/link-out-abs/secret.txt`, /symbolic link/],
    ["a symbolic link to a file outside", () => `${root}/link-out-file`, /symbolic link/],
    ["a new file under a link outside", () => `${root}/link-out/new-file.txt`, /symbolic link/],
    ["a dangling symbolic link (target outside)", () => `${root}/link-dangling`, /does not exist/],
    ["a dangling symbolic link (target inside: still refused)", () => `${root}/link-dangling-in`, /does not exist/],
    ["a link to the parent", () => `${root}/link-up/outside/secret.txt`, /symbolic link/],
    ["a link to the parent, then a sibling", () => `${root}/link-up/root-evil/secret.txt`, /symbolic link/],
    ["a symbolic link loop", () => `${root}/loop-a`, /loop/],
    ["a path below a loop", () => `${root}/loop-a/x`, /loop/],
    ["a nested link up two levels", () => `${root}/sub/link-back-up/outside/secret.txt`, /symbolic link/],
    ["a nested link into the prefix sibling", () => `${root}/sub/link-sibling/secret.txt`, /symbolic link/],
    ["a link into another folder that is not a root", () => `${root}/link-root2/other.txt`, /symbolic link/],
    ["a very long path", () => `${root}/${"a".repeat(5_000)}`, /longer than/],
    ["a number", () => 42, /string/],
    ["`..` into the prefix sibling's folder", () => `${root}/sub/../../root-evil`, /outside/],
  ];
  for (const [name, input, reason] of refused) {
    it(`refuses ${name}`, () => {
      const result = roots.check(input());
      expect(result.ok).toBe(false);
      expect(result.ok ? "" : result.reason).toMatch(reason);
    });
  }

  it("has at least 30 traversal cases", () => {
    expect(accepted.length + refused.length).toBeGreaterThanOrEqual(30);
  });

  it("accepts every root of a session with additional directories, and only them", () => {
    const two = new WorkingRoots([root, root2]);
    expect(two.check(`${root2}/other.txt`)).toEqual({ ok: true, path: `${root2}/other.txt` });
    expect(two.check(`${root}/link-root2/other.txt`)).toEqual({ ok: true, path: `${root}/link-root2/other.txt` });
    expect(two.check(`${root2}-evil/x`).ok).toBe(false);
    expect(two.roots).toEqual([root, root2]);
  });

  it("a root given through a symbolic link is compared by its real path", () => {
    const viaLink = new WorkingRoots([`${root}/link-in`]);
    expect(viaLink.check(`${root}/link-in/inner.txt`)).toEqual({ ok: true, path: `${root}/link-in/inner.txt` });
    expect(viaLink.check(`${root}/link-in/../notes.md`).ok).toBe(false);
  });

  it("refuses roots that are not absolute paths, and no roots at all", () => {
    expect(() => new WorkingRoots([])).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    expect(() => new WorkingRoots(["relative/dir"])).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    expect(() => new WorkingRoots([`${root}\0`])).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });

  it("isInside compares whole segments", () => {
    expect(isInside("/a/root", "/a/root")).toBe(true);
    expect(isInside("/a/root", "/a/root/x")).toBe(true);
    expect(isInside("/a/root", "/a/root-evil")).toBe(false);
    expect(isInside("/a/root", "/a/roo")).toBe(false);
    expect(isInside("/", "/anything")).toBe(true);
  });
});

/** Containment written independently of the implementation: `path.relative` must not climb out. */
function oracleInside(folder: string, target: string): boolean {
  const relative = path.relative(folder, target);
  return relative === "" || (relative !== ".." && !relative.startsWith("../") && !path.isAbsolute(relative));
}

/**
 * The independent resolver: where does the OS end up for `target` (absolute,
 * normalized), following symbolic links one component at a time? Components
 * past the first missing one are appended as they are (nothing below a missing
 * entry can be a link). `linked` says whether a link was followed.
 */
function oracleResolve(target: string): { kind: "resolved"; real: string; linked: boolean } | { kind: "loop" } {
  let current = "/";
  let queue = target.split("/").filter((part) => part !== "");
  let hops = 0;
  let linked = false;
  while (queue.length > 0) {
    const part = queue.shift()!;
    if (part === ".") continue;
    if (part === "..") {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(next);
    } catch {
      return { kind: "resolved", real: path.join(next, ...queue), linked };
    }
    if (stats.isSymbolicLink()) {
      linked = true;
      if (++hops > 40) return { kind: "loop" };
      const link = readlinkSync(next);
      const parts = link.split("/").filter((piece) => piece !== "");
      if (path.isAbsolute(link)) current = "/";
      queue = [...parts, ...queue];
      continue;
    }
    if (!stats.isDirectory() && queue.length > 0) {
      // A file used as a folder: the OS fails (ENOTDIR); nothing is reached.
      return { kind: "resolved", real: path.join(next, ...queue), linked };
    }
    current = next;
  }
  return { kind: "resolved", real: current, linked };
}

describe("WorkingRoots.check: property", () => {
  it("no generated path that is accepted resolves outside the root (2,000 paths)", () => {
    const segment = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constantFrom(
          "..",
          ".",
          "",
          "sub",
          "deeper",
          "notes.md",
          "inner.txt",
          "new.txt",
          "root",
          "root-evil",
          "outside",
          "secret.txt",
        ),
      },
      {
        weight: 5,
        arbitrary: fc.constantFrom(
          "link-in",
          "link-in-abs",
          "link-self",
          "link-out",
          "link-out-abs",
          "link-out-file",
          "link-dangling",
          "link-dangling-in",
          "link-up",
          "loop-a",
          "link-back-up",
          "link-sibling",
          "link-root2",
        ),
      },
      { weight: 2, arbitrary: fc.constantFrom("%2e%2e", "%2E%2E", "..%2f", "...", ". .", "\\..", "..\\", "%00", "\0", "~") },
      { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
    );
    const prefix = fc.constantFrom("ROOT", "ROOT", "ROOT", "ROOT/sub", "BASE", "/", "ROOT-evil", "", ".", "..", "~");
    let acceptedCount = 0;
    fc.assert(
      fc.property(prefix, fc.array(segment, { maxLength: 8 }), fc.boolean(), (start, parts, trailingSlash) => {
        const head = start.replace("ROOT", root).replace("BASE", base);
        const candidate = [head, ...parts].join("/") + (trailingSlash ? "/" : "");
        const result = roots.check(candidate);
        const lexical = path.isAbsolute(candidate) && !candidate.includes("\0") ? path.resolve(candidate) : undefined;
        if (!result.ok) {
          // Completeness: a plain path (no NUL, absolute, lexically inside, no links on the way) must not be refused.
          if (lexical !== undefined && oracleInside(root, lexical) && candidate.length <= 4_096) {
            const resolved = oracleResolve(lexical);
            if (resolved.kind === "resolved" && !resolved.linked)
              throw new Error(`refused a plain path inside the root: ${JSON.stringify(candidate)} (${result.reason})`);
          }
          return;
        }
        acceptedCount++;
        expect(typeof candidate === "string" && !candidate.includes("\0")).toBe(true);
        expect(path.isAbsolute(candidate)).toBe(true);
        expect(result.path).toBe(lexical);
        expect(oracleInside(root, result.path)).toBe(true);
        const resolved = oracleResolve(result.path);
        if (resolved.kind === "loop") throw new Error(`accepted a path through a link loop: ${JSON.stringify(candidate)}`);
        if (!oracleInside(root, resolved.real)) {
          throw new Error(`ESCAPE: ${JSON.stringify(candidate)} was accepted as ${result.path} but resolves to ${resolved.real}`);
        }
      }),
      { numRuns: 2_000 },
    );
    // The property must not pass by refusing everything.
    expect(acceptedCount).toBeGreaterThan(200);
  });
});
