/**
 * docs/sidecar.md, "From a checkout": the two command lines it prints are run as written, from
 * the repository root — the `node ...` line as the process a host starts (greeted, then shut
 * down), and the `export TOOLRELAY_SIDECAR=...` line in front of the Python library's
 * `start_sidecar()`. The build the section asks for first (`npm run build`) is what `npm test`
 * runs before the integration tests.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FrameHost } from "../test/sidecar/support/frame-host.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const docs = readFileSync(new URL("../docs/sidecar.md", import.meta.url), "utf8");

/** The `sh` blocks of the section, each line without its trailing comment. */
function sectionLines(): string[] {
  const section = /^### From a checkout\n([\s\S]*?)(?=^#{2,3} )/m.exec(docs)?.[1];
  if (section === undefined) throw new Error('docs/sidecar.md has no "### From a checkout" section');
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  return blocks
    .flatMap((block) => block.split("\n"))
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line !== "");
}

function documented(prefix: string): string {
  const line = sectionLines().find((candidate) => candidate.startsWith(prefix));
  if (line === undefined) throw new Error(`no line starting with "${prefix}" in docs/sidecar.md, "From a checkout"`);
  return line;
}

function built(): void {
  if (!existsSync(`${root}packages/toolrelay/dist/sidecar/bin.js`))
    throw new Error("the build is missing: run `npm run build` first (npm test does)");
}

describe('docs/sidecar.md, "From a checkout"', () => {
  it("lists the build, the node line and the TOOLRELAY_SIDECAR line", () => {
    expect(sectionLines()).toEqual([
      "npm ci && npm run build",
      "node packages/toolrelay/dist/sidecar/bin.js",
      'export TOOLRELAY_SIDECAR="node $PWD/packages/toolrelay/dist/sidecar/bin.js"',
    ]);
  });

  it("the node line, run as written in the repository root, is a sidecar a host can greet and shut down", async () => {
    built();
    const child = spawn("sh", ["-c", `exec ${documented("node ")}`], {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "" },
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      const host = new FrameHost(child.stdin, child.stdout);
      expect(await host.greet()).toMatchObject({ type: "welcome", version: 2, sidecar: { name: "toolrelay-sidecar" } });
      host.send({ type: "shutdown" });
      expect(await exited).toBe(0);
      expect(host.frames.at(-1)).toEqual({ type: "goodbye" });
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("the TOOLRELAY_SIDECAR line makes the Python library's start_sidecar() start that sidecar", async () => {
    built();
    const program = [
      "import asyncio",
      "from toolrelay import start_sidecar",
      "async def main():",
      "    async with start_sidecar() as sidecar:",
      "        print('welcome', sidecar.welcome['version'], sidecar.welcome['sidecar']['name'])",
      "asyncio.run(main())",
    ].join("\n");
    const script = `${documented("export TOOLRELAY_SIDECAR=")} && cd clients/python && python3 -c "$PROGRAM"`;
    const child = spawn("sh", ["-c", script], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "", PROGRAM: program, PYTHONDONTWRITEBYTECODE: "1" },
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(output).toContain("welcome 2 toolrelay-sidecar");
    expect(code, output).toBe(0);
  });
});
