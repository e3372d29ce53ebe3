/**
 * A `ws` WebSocket that timestamps, without changing anything it does, the
 * moment a tool call request is handed to the socket's `message` listeners and
 * the moment the matching response is given to `send()`. The difference is the
 * time the client side (the SDK, or the baseline handler) spends on one call in
 * its own process: decode, dispatch, run the tool, encode, hand to the socket —
 * neither the network nor the runtime. Requests and responses are matched by
 * `request_id`, which is read AFTER each clock reading (outside the window).
 *
 * Pass the class as `backend.WebSocket` (the SDK's local backend accepts a
 * WebSocket class) or construct it directly (the baseline).
 */
import WebSocket from "ws";

const REQUEST_ID = /"request_id":"([^"]+)"/;

/** Handling times recorded by every TimedWebSocket built by one `timedWebSocketClass()`. */
export interface HandlingRecorder {
  /** µs from the request's `message` event to the response's `send()`, in completion order. */
  readonly samples: number[];
  /** Forget every sample (after a warm-up). */
  reset(): void;
}

/**
 * With `approvals: true`, the sockets also time each client tool call of a mode that asks first:
 * from its `can_use_tool` `control_request` reaching the `message` listeners to its
 * `external_tool_call_response` given to `send()` — the SDK's answer, the runtime's turn to send
 * the request, and the SDK's handling of it. Off by default: it parses those two frames (before
 * the clock reading, but inside an earlier call's window when calls overlap).
 */
export interface TimedWebSocketOptions {
  /** Also record `approvalSamples`. Default `false`. */
  approvals?: boolean | undefined;
}

/** A WebSocket class (for `backend.WebSocket`) and the recorder its sockets write to. */
export function timedWebSocketClass(options: TimedWebSocketOptions = {}): {
  WebSocket: typeof WebSocket;
  recorder: HandlingRecorder;
  /** µs from a call's `can_use_tool` in to its response's `send()` (only with `approvals: true`), in completion order. */
  approvalSamples: number[];
} {
  const samples: number[] = [];
  const received = new Map<string, bigint>();
  const sent = new Map<string, bigint>();
  const approvalSamples: number[] = [];
  /** When each asked call's `can_use_tool` arrived, by tool call id. */
  const askedAt = new Map<string, bigint>();
  /** The tool call id of each external request, by request id. */
  const toolCallOf = new Map<string, string>();
  const match = (receivedAt: bigint, sentAt: bigint) => {
    samples.push(Number(sentAt - receivedAt) / 1000);
  };
  /**
   * Read BEFORE the clock (and before the listeners: the SDK may answer a request inside them):
   * an external request's tool call id is filed at once; a `can_use_tool`'s tool call id is
   * returned, for the caller to file with its arrival time.
   */
  const askedToolCallOf = (data: Buffer): string | undefined => {
    if (!data.includes("can_use_tool") && !data.includes("external_tool_call_request")) return undefined;
    const frame = JSON.parse(data.toString()) as {
      type?: string;
      request_id?: string;
      tool_call_id?: string;
      request?: { subtype?: string; tool_call_id?: string };
    };
    if (frame.type === "external_tool_call_request" && frame.request_id && frame.tool_call_id) {
      toolCallOf.set(frame.request_id, frame.tool_call_id);
    }
    return frame.type === "control_request" && frame.request?.subtype === "can_use_tool" ? frame.request.tool_call_id : undefined;
  };
  const matchApproval = (requestId: string, sentAt: bigint) => {
    const toolCallId = toolCallOf.get(requestId);
    toolCallOf.delete(requestId);
    const asked = toolCallId === undefined ? undefined : askedAt.get(toolCallId);
    if (toolCallId === undefined || asked === undefined) return;
    askedAt.delete(toolCallId);
    approvalSamples.push(Number(sentAt - asked) / 1000);
  };

  class TimedWebSocket extends WebSocket {
    override emit(event: string | symbol, ...args: unknown[]): boolean {
      if (event !== "message") return super.emit(event, ...args);
      const asked = options.approvals ? askedToolCallOf(args[0] as Buffer) : undefined;
      const receivedAt = process.hrtime.bigint();
      if (asked !== undefined) askedAt.set(asked, receivedAt);
      const result = super.emit(event, ...args);
      const data = args[0] as Buffer;
      if (data.includes("external_tool_call_request")) {
        const requestId = REQUEST_ID.exec(data.toString())?.[1];
        if (requestId !== undefined) {
          const sentAt = sent.get(requestId);
          if (sentAt !== undefined) {
            sent.delete(requestId);
            match(receivedAt, sentAt);
          } else received.set(requestId, receivedAt);
        }
      }
      return result;
    }

    override send(data: unknown, ...rest: unknown[]): void {
      const sentAt = process.hrtime.bigint();
      (super.send as (...args: unknown[]) => void)(data, ...rest);
      if (typeof data === "string" && data.includes("external_tool_call_response")) {
        const requestId = REQUEST_ID.exec(data)?.[1];
        if (requestId === undefined) return;
        if (options.approvals) matchApproval(requestId, sentAt);
        const receivedAt = received.get(requestId);
        if (receivedAt !== undefined) {
          received.delete(requestId);
          match(receivedAt, sentAt);
        } else sent.set(requestId, sentAt);
      }
    }
  }

  return {
    WebSocket: TimedWebSocket as unknown as typeof WebSocket,
    approvalSamples,
    recorder: {
      samples,
      reset() {
        samples.length = 0;
        received.clear();
        sent.clear();
        approvalSamples.length = 0;
        askedAt.clear();
        toolCallOf.clear();
      },
    },
  };
}
