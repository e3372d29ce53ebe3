/** Types of scripts/markdown-blocks.mjs (plain Node ESM, so that check-doc-snippets.mjs runs without a build). */
export interface FencedBlock {
  language: string;
  meta: string;
  firstLine: number;
  code: string;
  marker: string | undefined;
}
export interface MarkedBlock {
  label: string;
  note: string;
  block: FencedBlock;
  index: number;
  blocks: FencedBlock[];
}
export function fencedBlocks(markdown: string): FencedBlock[];
export function markedBlocks(markdown: string, name: string): MarkedBlock[];
export function programAt(blocks: FencedBlock[], index: number): string;
