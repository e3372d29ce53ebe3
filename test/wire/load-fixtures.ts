/** Reads the literal JSON fixtures under test/fixtures/. */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const fixturesRoot = fileURLToPath(new URL("../fixtures/", import.meta.url));

export interface Fixture {
  name: string;
  /** The file's text, exactly as written. */
  text: string;
  value: unknown;
}

/** Every `*.json` file of one fixture folder, sorted by name. */
export function loadFixtures(folder: string): Fixture[] {
  const directory = `${fixturesRoot}${folder}`;
  return readdirSync(directory)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => {
      const text = readFileSync(`${directory}/${name}`, "utf8");
      return { name: name.slice(0, -".json".length), text, value: JSON.parse(text) as unknown };
    });
}

/** One fixture by name. */
export function fixture(folder: string, name: string): Record<string, unknown> {
  const found = loadFixtures(folder).find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no fixture ${folder}/${name}.json`);
  return structuredClone(found.value) as Record<string, unknown>;
}
