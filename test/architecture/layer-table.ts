/**
 * The layer table of CONTRIBUTING.md ("Layers"), read as data: one row per folder (or single file)
 * of a package's source, and what it may import — other rows of the same package by their name
 * under that package's `src/`, or a published entry point by its package name (`toolrelay/protocol`).
 */

/** One row of the table. */
export interface LayerRule {
  /** A folder or file, from the repository root: `packages/toolrelay/src/wire`, `packages/toolrelay/src/errors.ts`. */
  folder: string;
  /** What it may import besides itself, as written: row names (`wire`, `errors.ts`) or entry points (`toolrelay/protocol`). */
  mayImport: readonly string[];
}

/** The heading whose section holds the table, and the header cells that mark it. */
const SECTION = "## Layers";
const FOLDER_HEADER = "folder";
const MAY_IMPORT_HEADER = "may import";
/** A cell that allows nothing. */
const NOTHING = new Set(["", "—", "-", "nothing"]);

/**
 * The rows of the layer table in `markdown` (CONTRIBUTING.md). Throws when the section or the
 * table is missing, or a row is malformed — a table the test cannot read must not pass.
 */
export function parseLayerTable(markdown: string): LayerRule[] {
  const lines = markdown.split("\n");
  const start = lines.findIndex((line) => line.trim() === SECTION);
  if (start < 0) throw new Error(`the layer table: no "${SECTION}" section`);
  const end = lines.findIndex((line, index) => index > start && /^## /.test(line));
  const section = lines.slice(start + 1, end < 0 ? undefined : end);
  const headerAt = section.findIndex((line) => line.trim().startsWith("|") && cellsOf(line).includes(FOLDER_HEADER));
  if (headerAt < 0) throw new Error(`the layer table: no table with a "${FOLDER_HEADER}" column under "${SECTION}"`);
  const header = cellsOf(section[headerAt]!);
  const folderColumn = header.indexOf(FOLDER_HEADER);
  const importColumn = header.indexOf(MAY_IMPORT_HEADER);
  if (importColumn < 0) throw new Error(`the layer table: no "${MAY_IMPORT_HEADER}" column`);
  const rules: LayerRule[] = [];
  for (const line of section.slice(headerAt + 2)) {
    if (!line.trim().startsWith("|")) break;
    const cells = cellsOf(line);
    const folder = unquote(cells[folderColumn] ?? "");
    if (!/^[\w./@-]+$/.test(folder)) throw new Error(`the layer table: a row without a folder: ${line}`);
    const allowed = (cells[importColumn] ?? "").trim();
    const mayImport = NOTHING.has(allowed) ? [] : allowed.split(",").map((name) => unquote(name));
    for (const name of mayImport) if (!/^[\w./@-]+$/.test(name)) throw new Error(`the layer table: "${name}" in the row of ${folder}`);
    rules.push({ folder, mayImport });
  }
  if (rules.length === 0) throw new Error("the layer table has no rows");
  return rules;
}

function cellsOf(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, "")
    .split("|")
    .map((cell) => cell.trim());
}

function unquote(text: string): string {
  return text.trim().replace(/^`|`$/g, "");
}
