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

/** A WebSocket class (for `backend.WebSocket`) and the recorder its sockets write to. */
export function timedWebSocketClass(): { WebSocket: typeof WebSocket; recorder: HandlingRecorder } {
  const samples: number[] = [];
  const received = new Map<string, bigint>();
  const sent = new Map<string, bigint>();
  const match = (receivedAt: bigint, sentAt: bigint) => {
    samples.push(Number(sentAt - receivedAt) / 1000);
  };

  class TimedWebSocket extends WebSocket {
    override emit(event: string | symbol, ...args: unknown[]): boolean {
      if (event !== "message") return super.emit(event, ...args);
      const receivedAt = process.hrtime.bigint();
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
    recorder: {
      samples,
      reset() {
        samples.length = 0;
        received.clear();
        sent.clear();
      },
    },
  };
}
