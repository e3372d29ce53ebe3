// Fenced code blocks of a Markdown text, and the blocks a `<!-- name: label -->` comment marks.
// Shared by the checks that read code out of the docs (scripts/check-doc-snippets.mjs,
// scripts/check-doc-texts.ts, scripts/newcomer-test.ts), so they all see the same blocks.

/**
 * Every fenced block of a Markdown text: its language, the rest of its info string (`meta`), the
 * 1-based line of its first code line, its code (indentation of the fence removed), and the text of
 * the `<!-- ... -->` comment right above it (blank lines between allowed), if any.
 * @param {string} markdown
 * @returns {{ language: string, meta: string, firstLine: number, code: string, marker: string | undefined }[]}
 */
export function fencedBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split("\n");
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$/.exec(lines[index]);
    if (!open) continue;
    const [, indent, fence, language, meta] = open;
    const body = [];
    let end = index + 1;
    while (end < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[end])) {
      body.push(lines[end].startsWith(indent) ? lines[end].slice(indent.length) : lines[end]);
      end += 1;
    }
    blocks.push({
      language: language.toLowerCase(),
      meta: meta.trim(),
      firstLine: index + 2,
      code: body.join("\n"),
      marker: markerAbove(lines, index),
    });
    index = end;
  }
  return blocks;
}

/** The text of a `<!-- ... -->` line right above line `index` (only blank lines between), trimmed. */
function markerAbove(lines, index) {
  for (let above = index - 1; above >= 0; above -= 1) {
    const line = lines[above].trim();
    if (line === "") continue;
    return /^<!--\s*(.*?)\s*-->$/.exec(line)?.[1];
  }
  return undefined;
}

/**
 * The blocks whose marker reads `<name>: <label>...`, with that label (its first word) and the rest
 * of the marker. `newcomer-test: run (steps 1 to 5)` → `{ label: "run", note: "(steps 1 to 5)", block }`.
 * @param {string} markdown
 * @param {string} name
 */
export function markedBlocks(markdown, name) {
  const blocks = fencedBlocks(markdown);
  return blocks.flatMap((block, index) => {
    const match = new RegExp(`^${name}:\\s*(\\S+)\\s*(.*)$`).exec(block.marker ?? "");
    return match ? [{ label: match[1], note: match[2], block, index, blocks }] : [];
  });
}

/**
 * The program a ```ts block starts: it and the ```ts continued blocks right after it (see
 * CONTRIBUTING.md, "Code in the docs"), joined.
 * @param {ReturnType<typeof fencedBlocks>} blocks
 * @param {number} index
 */
export function programAt(blocks, index) {
  const parts = [blocks[index].code];
  for (const block of blocks.slice(index + 1)) {
    if (block.language !== "ts" && block.language !== "typescript") continue;
    if (!/\bcontinued\b/.test(block.meta)) break;
    parts.push(block.code);
  }
  return `${parts.join("\n")}\n`;
}
