/**
 * The shapes calls/ borrows from the layers below it: the outcomes of
 * preflight and execution and the tool annotations (tools/), and the response body
 * and content blocks (wire/). Every import calls/ makes from those two layers
 * goes through this one file.
 */
export type { ExecutionOutcome, InputIssue, PreflightOutcome, ToolAnnotations } from "../tools/index.js";
export type { ToolCallResponseBody, WireContentBlock } from "../wire/index.js";
