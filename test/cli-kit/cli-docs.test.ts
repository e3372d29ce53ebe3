/**
 * Each executable's "Command-line tools" section in its docs page lists exactly the flags its
 * `--help` prints (the usage text the process tests see on `--help`), says `-h`, and gives the exit codes.
 */
import { readFileSync } from "node:fs";
import { type CliCommand, usageText } from "@toolrelay/cli-kit";
import { describe, expect, it } from "vitest";
import { RELAY_COMMAND } from "../../packages/relay/src/cli.js";
import { OPENAI_COMMAND } from "../../packages/toolrelay/src/openai/cli.js";
import { SIDECAR_COMMAND } from "../../packages/toolrelay/src/sidecar/cli.js";

const PAGES: readonly (readonly [string, CliCommand])[] = [
  ["docs/relay.md", RELAY_COMMAND],
  ["docs/openai-bridge.md", OPENAI_COMMAND],
  ["docs/sidecar.md", SIDECAR_COMMAND],
];

/** The section under `## Command-line tools`, up to the next heading of level 2 or 3. */
function section(page: string): string {
  const text = readFileSync(new URL(`../../${page}`, import.meta.url), "utf8");
  const start = text.indexOf("\n## Command-line tools\n");
  if (start < 0) throw new Error(`${page} has no "## Command-line tools" section`);
  const rest = text.slice(start + 1);
  const end = rest.slice(3).search(/\n#{2,3} /);
  return end < 0 ? rest : rest.slice(0, end + 3);
}

/** The long flags `--help` prints, one an option line. */
function helpFlags(command: CliCommand): string[] {
  return [...usageText(command).matchAll(/^ {2}(?:-\w, )?--([a-z][a-z0-9-]*)/gm)].map((match) => match[1]!).sort();
}

describe.each(PAGES)("%s", (page, command) => {
  it(`lists exactly the flags of ${command.name} --help, and -h`, () => {
    const text = section(page);
    const documented = [...new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((match) => match[1]!))].sort();
    expect(documented).toEqual(helpFlags(command));
    expect(text).toContain("`-h`");
    expect(text).toContain(`${command.name} ${command.synopsis}`);
  });

  it("gives the exit codes", () => {
    expect(section(page)).toMatch(/Exit codes/);
  });
});
