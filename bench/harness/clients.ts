/**
 * The client sides the round-trip benchmarks compare, all in the bench process,
 * each answering the runtime side's `external_tool_call_request` frames with a
 * no-op tool:
 *
 * - `baseline`: a minimal hand-written handler on a raw `ws` socket — parse the
 *   request, call the function, write the response; no validation.
 * - `toolrelay`: a real `createSession` (local backend) with a `defineTool` no-op.
 * - `toolrelay+mcp`: the same session whose tool forwards each call to an MCP
 *   stdio server in a child process (`@modelcontextprotocol/sdk`).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import WebSocket from "ws";
import { z } from "zod";
import type { Session, SessionOptions } from "../../packages/toolrelay/src/index.js";
import { createSession, defineTool } from "./sdk.js";
import { REPO_ROOT } from "./child-process.js";

/** One connected client side. `close()` releases everything it started. */
export interface BenchClient {
  readonly label: string;
  close(): Promise<void>;
}

/** The no-op both sides call. */
export function noop(_input: unknown): string {
  return "ok";
}

/** A tool that never resolves until its call is aborted (scale benchmark). */
export function hangUntilAborted(signal: AbortSignal): Promise<string> {
  return new Promise<string>((resolve) => signal.addEventListener("abort", () => resolve("aborted"), { once: true }));
}

/**
 * The baseline: raw `ws`, `JSON.parse`, call, `JSON.stringify`, `send`. It sends
 * a bare `runtime_start` (no tools) only so the runtime side can label it.
 */
export async function startBaselineClient(
  url: string,
  label = "baseline",
  options: {
    WebSocket?: typeof WebSocket;
    timeoutMs?: number;
    /** Busy-wait this many µs before answering each call (a control variant; read per call). */
    spinMicros?: () => number;
  } = {},
): Promise<BenchClient> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const SocketClass = options.WebSocket ?? WebSocket;
  const socket = new SocketClass(url, { perMessageDeflate: false });
  socket.on("error", () => undefined);
  await withDeadline(
    new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    }),
    timeoutMs,
    "baseline socket open",
  );
  const registered = new Promise<void>((resolve) => {
    socket.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; request_id: string; input: unknown };
      if (frame.type === "external_tool_call_request") {
        if (options.spinMicros) spin(options.spinMicros());
        const text = noop(frame.input);
        socket.send(
          JSON.stringify({
            type: "external_tool_call_response",
            request_id: frame.request_id,
            result: { content: [{ type: "text", text }] },
          }),
        );
      } else if (frame.type === "runtime_start_response") resolve();
    });
  });
  socket.send(
    JSON.stringify({ type: "runtime_start", request_id: "baseline-start", agent_id: "agent-bench", client_info: { name: label } }),
  );
  await withDeadline(registered, timeoutMs, "baseline runtime_start_response");
  return {
    label,
    close: () => closeSocket(socket),
  };
}

/** Burn `micros` of CPU on this thread. */
function spin(micros: number): void {
  if (micros <= 0) return;
  const until = process.hrtime.bigint() + BigInt(Math.round(micros * 1000));
  while (process.hrtime.bigint() < until);
}

export const noopTool = defineTool({
  name: "noop",
  description: "Does nothing and answers ok",
  inputSchema: z.object({}),
  annotations: { readOnlyHint: true },
  execute: (input) => noop(input),
});

/**
 * A real session (local backend) with the no-op tool. `WebSocket` replaces the socket class (timing).
 * Its mode is the session's default (strict since issue 26): the bench's runtime side
 * (bench/processes/runtime-side.ts) sends the requests itself and never asks `can_use_tool`, so the
 * figures stay comparable with runs before the default changed; only the real-turn suite meets a
 * runtime that asks (it names its modes).
 */
export async function startSdkClient(
  url: string,
  label = "toolrelay",
  options: { WebSocket?: typeof WebSocket; session?: Partial<SessionOptions> } = {},
): Promise<BenchClient & { session: Session }> {
  const session = await createSession({
    backend: { kind: "local", url, ...(options.WebSocket ? { WebSocket: options.WebSocket } : {}) },
    agent: { id: "agent-bench" },
    tools: [noopTool],
    clientInfo: { name: label },
    ...options.session,
  });
  return { label, session, close: () => session.close() };
}

/** A session whose `noop` forwards every call to an MCP stdio server (a child process). */
export async function startSdkMcpClient(url: string, label = "toolrelay+mcp"): Promise<BenchClient & { session: Session }> {
  const mcp = new Client({ name: "toolrelay-bench", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["bench/processes/mcp-noop-server.mjs"],
    cwd: REPO_ROOT,
    stderr: "ignore",
  });
  await withDeadline(mcp.connect(transport), 30_000, "MCP server connect");
  const forwarding = defineTool({
    name: "noop",
    description: "Does nothing and answers ok (through an MCP server)",
    inputSchema: z.object({}),
    execute: async (input, { signal }) => {
      const result = await mcp.callTool({ name: "noop", arguments: input }, undefined, { signal });
      const content = result.content as Array<{ type: string; text?: string }>;
      return content.map((block) => block.text ?? "").join("\n");
    },
  });
  let session: Session;
  try {
    session = await createSession({
      backend: { kind: "local", url },
      agent: { id: "agent-bench" },
      tools: [forwarding],
      clientInfo: { name: label },
    });
  } catch (error) {
    await mcp.close();
    throw error;
  }
  return {
    label,
    session,
    async close() {
      await session.close();
      await mcp.close();
    },
  };
}

export function closeSocket(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      socket.terminate();
      resolve();
    }, 1_000);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
    socket.close();
  });
}

export async function withDeadline<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`bench: ${what} took longer than ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
