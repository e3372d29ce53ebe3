/**
 * Checks every model-facing text the docs quote against the text the code produces. A quote is
 * marked in the Markdown with a comment naming a case of this file, right above it:
 *
 *     <!-- model-text: timeout-safe -->
 *     `Error: tool get_weather timed out after 10000 ms. It has no side effects; it is safe to retry.`
 *
 * The quote is the first inline code span after the comment, or the fenced block right below it.
 * Each case renders its text with the SDK's own code — the real validators (ajv, valibot, zod), the
 * real callback runner (`executeTool`) and the one place outcomes become wire text
 * (`responseForOutcome`) — so a changed text in the code fails here until the docs quote it.
 * Fails on a quote that differs, a marker naming no case, and a case no page quotes.
 *
 * Usage: npx tsx scripts/check-doc-texts.ts   (part of `npm run docs:check`)
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { z } from "zod";
import { type CallOutcome, responseForOutcome } from "../packages/toolrelay/src/calls/call-outcome.js";
import { defineTool, errorResult } from "../packages/toolrelay/src/index.js";
import { type ClientTool, type ExecutionOutcome, executeTool, type ToolCallContext } from "../packages/toolrelay/src/tools/index.js";
import type { ToolCallResponseBody } from "../packages/toolrelay/src/wire/index.js";
import { orderJsonSchema, shipmentValibot } from "../test/fixtures/tool-schemas.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** How the runtime shows the model an `error` answer (docs/protocol.md#error-texts). */
const RUNTIME_ERROR_PREFIX = "External tool execution error: ";

/** The text the model reads for an answer: the error with the runtime's prefix, or the result's texts joined (as the runtime joins them). */
function modelReads(body: ToolCallResponseBody): string {
  if ("error" in body) return `${RUNTIME_ERROR_PREFIX}${body.error}`;
  return body.result.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
}

/** Runs a tool's callback through the SDK's runner, as a call does, and returns what the model reads. */
async function afterRunning(tool: ClientTool, input: unknown): Promise<string> {
  const context: ToolCallContext = {
    signal: new AbortController().signal,
    toolCallId: "call-1",
    agentId: "agent-1",
    conversationId: "conversation-1",
    idempotencyKey: "tr1_test",
    progress: () => undefined,
  };
  const outcome = await new Promise<ExecutionOutcome>((resolve) =>
    executeTool(tool, input, context, 32_000, (_token, done) => resolve(done), 0),
  );
  return modelReads(responseForOutcome(outcome, { toolName: tool.name }));
}

/** Validates `input` with the tool's own validator; what the model reads when it refuses it. */
async function afterValidating(tool: ClientTool, input: unknown): Promise<string> {
  const validation = await tool.validateInput(input);
  if (validation.ok) throw new Error(`check-doc-texts: ${tool.name} accepted the input meant to be refused`);
  const outcome: CallOutcome = { kind: "invalid-input", issues: validation.issues };
  return modelReads(responseForOutcome(outcome, { toolName: tool.name }));
}

const execute = () => "done";

/** Every text the docs may quote, by the name a marker gives it. */
const cases: Record<string, () => string | Promise<string>> = {
  "unknown-tool": () =>
    modelReads(
      responseForOutcome(
        { kind: "unknown-tool", toolName: "get_wether", available: ["get_weather", "read_buffer"] },
        { toolName: "get_wether" },
      ),
    ),
  "input-too-large": () =>
    modelReads(
      responseForOutcome(
        { kind: "input-too-large", bytes: Buffer.byteLength(JSON.stringify({ city: "x".repeat(1_999_989) })), limit: 1_048_576 },
        { toolName: "get_weather" },
      ),
    ),
  "invalid-input-json-schema": () =>
    afterValidating(defineTool({ name: "place_order", description: "Places an order", inputSchema: orderJsonSchema, execute }), {
      customer: { tier: "gold" },
      items: [{ sku: "abc", quantity: 0 }],
    }),
  "invalid-input-valibot": () =>
    afterValidating(
      defineTool({ name: "ship_parcel", description: "Ships a parcel", inputSchema: toStandardJsonSchema(shipmentValibot), execute }),
      {
        destination: { city: "", country: "FI" },
        weightKg: 31,
      },
    ),
  "invalid-input-zod": () =>
    afterValidating(
      defineTool({
        name: "add_items",
        description: "Adds items",
        inputSchema: z.object({ count: z.number().int().describe("How many") }),
        execute,
      }),
      { count: "three" },
    ),
  "denied-declined": () =>
    modelReads(responseForOutcome({ kind: "denied", reason: "declined", message: "Not this month." }, { toolName: "pay_invoice" })),
  "denied-timeout": () =>
    modelReads(responseForOutcome({ kind: "denied", reason: "timeout", message: "120 s" }, { toolName: "pay_invoice" })),
  "denied-no-approver": () =>
    modelReads(responseForOutcome({ kind: "denied", reason: "no-approver", message: "" }, { toolName: "pay_invoice" })),
  "output-schema-mismatch": () =>
    afterRunning(
      defineTool({
        name: "get_forecast",
        description: "The forecast",
        inputSchema: z.object({}),
        outputSchema: z.object({ celsius: z.number() }),
        // A result that breaks its own schema (as an untyped source could return).
        execute: () => JSON.parse('{"celsius":"warm"}') as { celsius: number },
      }),
      {},
    ),
  "timeout-safe": () =>
    modelReads(responseForOutcome({ kind: "timeout", timeoutMs: 10_000 }, { toolName: "get_weather", safeToRetry: true })),
  "outcome-unknown-started": () =>
    modelReads(responseForOutcome({ kind: "outcome-unknown", reason: "started", startedAt: 0 }, { toolName: "pay_invoice" })),
  "outcome-unknown-expired": () =>
    modelReads(responseForOutcome({ kind: "outcome-unknown", reason: "expired", startedAt: 0 }, { toolName: "pay_invoice" })),
  "journal-failed": () =>
    modelReads(responseForOutcome({ kind: "journal-failed", message: "file journal: ENOSPC" }, { toolName: "pay_invoice" })),
  "timeout-unsafe": () => modelReads(responseForOutcome({ kind: "timeout", timeoutMs: 800 }, { toolName: "slow_delete" })),
  thrown: () =>
    afterRunning(
      defineTool({
        name: "get_order",
        description: "An order by id",
        inputSchema: z.object({ id: z.string() }),
        execute: () => {
          throw new Error("database unreachable");
        },
      }),
      { id: "42" },
    ),
  "error-result": () =>
    afterRunning(
      defineTool({
        name: "get_order",
        description: "An order by id",
        inputSchema: z.object({ id: z.string() }),
        execute: ({ id }) => errorResult(`No order ${id}. Use list_orders to see valid ids.`),
      }),
      { id: "42" },
    ),
  "invalid-content": () =>
    afterRunning(
      defineTool({
        name: "sales_chart",
        description: "Last week's sales as a chart",
        inputSchema: z.object({}),
        execute: () => ({
          content: [
            { type: "text", text: "Chart of last week's sales:" },
            { type: "image", mimeType: "image/png" },
          ],
        }),
      }),
      {},
    ),
  "not-json": () =>
    afterRunning(
      defineTool({
        name: "get_order",
        description: "An order by id",
        inputSchema: z.object({ id: z.string() }),
        execute: () => ({ id: 42n }),
      }),
      { id: "42" },
    ),
};

/** Each `<!-- model-text: name -->` of a Markdown text, with its line and the text it quotes. */
function quotes(markdown: string): Array<{ name: string; line: number; quoted: string | undefined }> {
  const lines = markdown.split("\n");
  const found: Array<{ name: string; line: number; quoted: string | undefined }> = [];
  lines.forEach((line, index) => {
    const marker = /<!--\s*model-text:\s*(\S+)\s*-->/.exec(line);
    if (!marker) return;
    let next = index + 1;
    while (next < lines.length && lines[next]!.trim() === "") next += 1;
    const fence = /^(\s*)(`{3,}|~{3,})/.exec(lines[next] ?? "");
    let quoted: string | undefined;
    if (fence) {
      const body: string[] = [];
      for (let inner = next + 1; inner < lines.length && !lines[inner]!.trim().startsWith(fence[2]!); inner += 1) {
        body.push(lines[inner]!.slice(fence[1]!.length));
      }
      quoted = body.join("\n");
    } else {
      const rest = [line.slice(marker.index + marker[0].length), ...lines.slice(index + 1, index + 6)].join("\n");
      quoted = /`([^`]+)`/.exec(rest)?.[1];
    }
    found.push({ name: marker[1]!, line: index + 1, quoted });
  });
  return found;
}

const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const used = new Set<string>();
const problems: string[] = [];
let checked = 0;
for (const page of pages) {
  for (const quote of quotes(readFileSync(join(root, page), "utf8"))) {
    const render = cases[quote.name];
    if (!render) {
      problems.push(`${page}:${quote.line}: <!-- model-text: ${quote.name} --> names no case of scripts/check-doc-texts.ts`);
      continue;
    }
    used.add(quote.name);
    checked += 1;
    const actual = await render();
    if (quote.quoted !== actual) {
      problems.push(
        `${page}:${quote.line}: model-text ${quote.name} differs from the code\n  the page: ${JSON.stringify(quote.quoted)}\n  the code: ${JSON.stringify(actual)}`,
      );
    }
  }
}
for (const name of Object.keys(cases))
  if (!used.has(name)) problems.push(`model-text ${name}: no page quotes it (mark the quote, or drop the case)`);
console.log(
  `check-doc-texts: ${checked} quoted model-facing texts in ${pages.length} pages, ${checked - problems.filter((problem) => problem.includes("differs")).length} match the code`,
);
if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
