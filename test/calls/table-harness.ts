/**
 * Test helpers for the call table: a recording output with a switchable link
 * and epoch, deferred tools (made with defineTool, settled by the test), and
 * request builders. Uses the global (fake) timers through `systemTimers`.
 */
import { z } from "zod";
import { canonicalJson } from "../../packages/toolrelay/src/internal/canonical-json.js";
import {
  CallTable,
  inputDigest,
  type CallKey,
  type CallLimits,
  type CallOutcome,
  type CallRecord,
  type CallRequest,
  type CallTableOptions,
  type RequestDisposition,
} from "../../packages/toolrelay/src/calls/index.js";
import { defineTool, type ClientTool, type ToolAnnotations } from "../../packages/toolrelay/src/tools/index.js";
import type { ToolCallResponseBody } from "../../packages/toolrelay/src/wire/index.js";

export interface Frame {
  requestId: string;
  response: ToolCallResponseBody;
  epoch: number;
}

export interface Harness {
  table: CallTable;
  /** Frames actually written. */
  frames: Frame[];
  /** Every write attempt, written or not. */
  attempts: Array<Omit<Frame, "epoch">>;
  /** Records as they settled (the "end" report), with their outcome. */
  settled: Array<{ record: CallRecord; outcome: CallOutcome; requestIds: string[] }>;
  /** Outcomes produced after their call had settled. */
  late: Array<{ toolCallId: string; outcome: CallOutcome }>;
  starts: string[];
  progress: string[];
  /** `up: false` makes every write fail (held); `epoch` is what a write goes out on. */
  link: { up: boolean; epoch: number };
  /** Send one request (defaults: tool call id, empty input, epoch = the link's). */
  request(requestId: string, toolCallId: string, options?: RequestOptions): RequestDisposition;
}

export interface RequestOptions {
  tool?: ClientTool | undefined;
  input?: unknown;
  epoch?: number;
  scope?: Partial<Omit<CallKey, "toolCallId" | "inputDigest">>;
  toolName?: string;
  turn?: string;
}

export function createHarness(
  limits: Partial<CallLimits> = {},
  defaultTool?: ClientTool,
  approve?: CallTableOptions["approve"],
  journal?: CallTableOptions["journal"],
): Harness {
  const link = { up: true, epoch: 1 };
  const harness = { frames: [], attempts: [], settled: [], late: [], starts: [], progress: [], link } as unknown as Harness;
  harness.table = new CallTable({
    limits,
    approve,
    journal,
    output: {
      response(_record, requestId, response) {
        harness.attempts.push({ requestId, response });
        if (!link.up) return undefined;
        harness.frames.push({ requestId, response, epoch: link.epoch });
        return link.epoch;
      },
      end(record) {
        harness.settled.push({ record, outcome: record.outcome!, requestIds: record.deliveries.map((d) => d.requestId) });
      },
      late(record, _requestId, outcome) {
        harness.late.push({ toolCallId: record.toolCallId, outcome });
      },
      start(_record, requestId) {
        harness.starts.push(requestId);
      },
      progress(_record, _requestId, message) {
        harness.progress.push(message);
      },
    },
  });
  harness.request = (requestId, toolCallId, options = {}) =>
    harness.table.request(callRequest(requestId, toolCallId, { epoch: link.epoch, tool: defaultTool, ...options }));
  return harness;
}

export function callKey(toolCallId: string, input: unknown = {}, scope: RequestOptions["scope"] = {}): CallKey {
  return {
    connectionId: "connection-1",
    agentId: "agent-1",
    conversationId: "conversation-1",
    ...scope,
    toolCallId,
    inputDigest: inputDigest(canonicalJson(input)),
  };
}

export function callRequest(requestId: string, toolCallId: string, options: RequestOptions & { epoch: number }): CallRequest {
  const input = options.input ?? {};
  const canonical = canonicalJson(input);
  const tool = "tool" in options ? options.tool : undefined;
  return {
    requestId,
    epoch: options.epoch,
    ...(options.turn === undefined ? {} : { turn: options.turn }),
    ...callKey(toolCallId, input, options.scope),
    toolName: options.toolName ?? tool?.name ?? "x",
    tool,
    tools: { names: () => (tool === undefined ? [] : [tool.name]) },
    input,
    inputBytes: Buffer.byteLength(canonical),
  };
}

export interface DeferredTool {
  tool: ClientTool;
  /** Runs of the callback. */
  readonly calls: number;
  /** The context of the last run (its `signal` is read only when a test reads it). */
  readonly context:
    | {
        readonly signal: AbortSignal;
        readonly idempotencyKey: string;
        toolCallId: string;
        agentId: string;
        conversationId: string;
        progress(message: string): void;
      }
    | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** A tool whose every run waits until the test resolves or rejects it (all pending runs at once). */
export function deferredTool(
  name = "x",
  options: { timeoutMs?: number; annotations?: ToolAnnotations; readsSignal?: boolean } = {},
): DeferredTool {
  let calls = 0;
  let context: DeferredTool["context"];
  const pending: Array<{ resolve(value: unknown): void; reject(error: unknown): void }> = [];
  const tool = defineTool({
    name,
    description: `deferred ${name}`,
    inputSchema: z.looseObject({}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
    execute: (_input, callContext) => {
      calls++;
      context = callContext;
      if (options.readsSignal === true) void callContext.signal;
      return new Promise<string>((resolve, reject) => pending.push({ resolve: resolve as (value: unknown) => void, reject }));
    },
  });
  return {
    tool,
    get calls() {
      return calls;
    },
    get context() {
      return context;
    },
    resolve: (value) => {
      for (const run of pending.splice(0)) run.resolve(value);
    },
    reject: (error) => {
      for (const run of pending.splice(0)) run.reject(error);
    },
  };
}

/** A tool that answers at once (synchronously) with `value`. */
export function instantTool(name = "x", value: unknown = "done"): ClientTool {
  return defineTool({ name, description: `instant ${name}`, inputSchema: z.looseObject({}), execute: () => value as string });
}

export const text = (value: string): ToolCallResponseBody => ({ result: { content: [{ type: "text", text: value }] } });

/** Let pending promise reactions run (a few microtask turns). */
export async function flushMicrotasks(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await Promise.resolve();
}
