/**
 * Benchmark 4 (scale), in a process of its own started with `--expose-gc`:
 * N pending calls in one session, each a tool that never resolves until its
 * call is aborted; then `close()`. In-process: the session's backend is
 * `{ kind: "link" }` with a BenchLink (no socket, but every request is decoded
 * from its JSON text with the SDK's decodeFrame and every response encoded with
 * encodeFrame, as the local link does). The baseline holds the same pending
 * calls the minimal way: a Map from request id to an AbortController.
 */
import { z } from "zod";
import { serveParent } from "../harness/child-process.js";
import { BenchLink, toolCallRequestText } from "../harness/bench-link.js";
import { hangUntilAborted, noopTool } from "../harness/clients.js";
import { createSessionOnLink, defineTool } from "../harness/sdk.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("scale-worker needs --expose-gc");

export interface ScaleMeasurement {
  variant: "toolrelay" | "toolrelay-ignore" | "baseline";
  count: number;
  /** heapUsed after − before the flood, after full GCs, ÷ count. */
  bytesPerCall: number;
  /** `close()` (baseline: abort + respond to each) until it returned, ms. */
  closeMs: number;
  /** Until every handler's promise had settled too, ms. */
  allSettledMs: number;
  /** Responses written by close. */
  responses: number;
  /** Time to accept the flood (decode + start each call), ms. */
  floodMs: number;
}

function heapAfterGc(): number {
  for (let round = 0; round < 4; round++) gc!();
  return process.memoryUsage().heapUsed;
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function measureSdk(count: number, readsSignal: boolean): Promise<ScaleMeasurement> {
  let settledHandlers = 0;
  const hang = defineTool({
    name: "hang",
    description: "Never answers until aborted",
    inputSchema: z.object({}),
    // The same handler as the baseline's: one promise that settles when the signal aborts, then a count.
    execute: readsSignal
      ? (_input, { signal }) =>
          hangUntilAborted(signal).then((result) => {
            settledHandlers++;
            return result;
          })
      : () => {
          settledHandlers++;
          return new Promise<string>(() => undefined);
        },
  });
  const link = new BenchLink();
  const session = await createSessionOnLink({
    backend: { kind: "link", link },
    agent: { id: "agent-bench" },
    tools: [noopTool, hang],
    maxConcurrentCalls: count + 1,
  });
  // Warm-up: complete calls, so JIT, caches and the replay cache are in their steady state.
  for (let n = 0; n < 2_000; n++) link.receive(toolCallRequestText(n, "noop"));
  await tick();
  const responsesBefore = link.responses;
  const before = heapAfterGc();
  const floodStarted = performance.now();
  for (let n = 0; n < count; n++) link.receive(toolCallRequestText(1_000_000 + n, "hang"));
  const floodMs = performance.now() - floodStarted;
  await tick();
  if (session.pendingToolCalls !== count) throw new Error(`expected ${count} pending calls, found ${session.pendingToolCalls}`);
  const after = heapAfterGc();
  const closeStarted = performance.now();
  await session.close();
  const closeMs = performance.now() - closeStarted;
  while (settledHandlers < count) await tick();
  const allSettledMs = performance.now() - closeStarted;
  return {
    variant: readsSignal ? "toolrelay" : "toolrelay-ignore",
    count,
    bytesPerCall: (after - before) / count,
    closeMs,
    allSettledMs,
    responses: link.responses - responsesBefore,
    floodMs,
  };
}

async function measureBaseline(count: number): Promise<ScaleMeasurement> {
  const pending = new Map<string, AbortController>();
  let responses = 0;
  let settledHandlers = 0;
  const write = (text: string) => {
    if (text.length > 0) responses++;
  };
  const receive = (text: string) => {
    const frame = JSON.parse(text) as { type: string; request_id: string; input: unknown };
    if (frame.type !== "external_tool_call_request") return;
    const controller = new AbortController();
    pending.set(frame.request_id, controller);
    void hangUntilAborted(controller.signal).then((value) => {
      settledHandlers++;
      if (!pending.delete(frame.request_id)) return;
      write(
        JSON.stringify({
          type: "external_tool_call_response",
          request_id: frame.request_id,
          result: { content: [{ type: "text", text: value }] },
        }),
      );
    });
  };
  for (let n = 0; n < 2_000; n++) {
    receive(toolCallRequestText(n, "hang"));
    pending.get(`external-tool-${n}`)?.abort();
  }
  await tick();
  const responsesBefore = responses;
  const before = heapAfterGc();
  const floodStarted = performance.now();
  for (let n = 0; n < count; n++) receive(toolCallRequestText(1_000_000 + n, "hang"));
  const floodMs = performance.now() - floodStarted;
  await tick();
  const after = heapAfterGc();
  const closeStarted = performance.now();
  for (const [requestId, controller] of pending) {
    pending.delete(requestId);
    controller.abort();
    write(
      JSON.stringify({
        type: "external_tool_call_response",
        request_id: requestId,
        result: { content: [{ type: "text", text: "cancelled" }], is_error: true },
      }),
    );
  }
  const closeMs = performance.now() - closeStarted;
  while (settledHandlers < count + 2_000) await tick();
  const allSettledMs = performance.now() - closeStarted;
  return {
    variant: "baseline",
    count,
    bytesPerCall: (after - before) / count,
    closeMs,
    allSettledMs,
    responses: responses - responsesBefore,
    floodMs,
  };
}

const parent = serveParent(async (cmd, message) => {
  if (cmd !== "measure") throw new Error(`unknown command ${cmd}`);
  const count = message.count as number;
  const result = message.variant === "baseline" ? await measureBaseline(count) : await measureSdk(count, message.variant === "toolrelay");
  return { result };
});
parent.ready({ pid: process.pid });
