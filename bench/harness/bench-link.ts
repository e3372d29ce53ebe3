/**
 * A RuntimeLink for in-process benchmarks (`backend: { kind: "link", link }`):
 * no socket, but the same per-frame work as the local link — every inbound
 * message is decoded from its JSON text with the SDK's `decodeFrame`, every
 * outbound frame is validated and serialized with `encodeFrame`. It answers
 * `runtime_start` itself, so `createSession` resolves at once.
 */
import { EventEmitter } from "eventemitter3";
import type { LinkState, RuntimeLink, RuntimeLinkEvents } from "../../packages/toolrelay/src/transport/runtime-link.js";
import type { OutboundFrame } from "../../packages/toolrelay/src/wire/index.js";
import { decodeFrame, encodeFrame } from "./sdk.js";

export const BENCH_RUNTIME = { agent_id: "agent-bench", conversation_id: "conv-bench" } as const;
const RUNTIME_JSON = JSON.stringify(BENCH_RUNTIME);

/** The text of one `external_tool_call_request`, as the runtime writes it. */
export function toolCallRequestText(n: number, toolName = "noop"): string {
  return `{"type":"external_tool_call_request","request_id":"external-tool-${n}","runtime":${RUNTIME_JSON},"tool_call_id":"call_${n}","tool_name":"${toolName}","input":{}}`;
}

export class BenchLink extends EventEmitter<RuntimeLinkEvents> implements RuntimeLink {
  readonly connectionId = "bench:link";
  readonly keepsPendingCallsAcrossReconnect = false;
  readonly epoch = 1;
  #state: LinkState = "idle";
  /** external_tool_call_response frames written so far. */
  responses = 0;
  /** Called with each response's request id (after encoding). */
  onResponse: ((requestId: string, text: string) => void) | undefined;

  get state(): LinkState {
    return this.#state;
  }

  async connect(): Promise<void> {
    this.#setState("open");
  }

  send(frame: OutboundFrame, trusted = false): boolean {
    if (this.#state !== "open") return false;
    const text = encodeFrame(frame, trusted);
    if (frame.type === "runtime_start") {
      const requestId = (frame as { request_id: string }).request_id;
      queueMicrotask(() =>
        this.receive(JSON.stringify({ type: "runtime_start_response", request_id: requestId, success: true, runtime: BENCH_RUNTIME })),
      );
    } else if (frame.type === "external_tool_call_response") {
      this.responses++;
      this.onResponse?.(frame.request_id, text);
    }
    return true;
  }

  /** One message from the runtime, as the local link handles it. */
  receive(text: string): void {
    const decoded = decodeFrame(text);
    if (decoded.kind === "frame") this.emit("frame", decoded.frame, decoded.envelope);
    else if (decoded.kind === "unknown") this.emit("unknown-frame", decoded.type);
    else this.emit("invalid-frame", decoded.error);
  }

  async close(): Promise<void> {
    this.#setState("closed");
  }

  #setState(state: LinkState): void {
    const previous = this.#state;
    if (previous === state) return;
    this.#state = state;
    this.emit("state", state, previous);
  }
}
