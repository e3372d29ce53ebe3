/**
 * One client socket of the scripted runtime: its `app-server-<n>` id, its
 * `event_seq` counter (per connection, from 1, across all runtimes —
 * docs/protocol.md#event-envelope) and the two ways frames are written: runtime events with the envelope
 * (`runtime`, `event_seq`, `emitted_at`, `idempotency_key`) and plain
 * responses/requests without it.
 */
import { randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import type { Timers } from "../internal/timers.js";
import type { ScriptedFrameRecord, ScriptedRuntimeScope } from "./scripted-runtime-types.js";

export class ScriptedConnection {
  #eventSeq = 0;
  #pendingWrites = new Set<Promise<void>>();

  readonly id: string;
  readonly #socket: WebSocket;
  readonly #onSent: (record: ScriptedFrameRecord) => void;
  readonly #timers: Timers;

  constructor(id: string, socket: WebSocket, timers: Timers, onSent: (record: ScriptedFrameRecord) => void) {
    this.id = id;
    this.#socket = socket;
    this.#timers = timers;
    this.#onSent = onSent;
  }

  get isOpen(): boolean {
    return this.#socket.readyState === WebSocket.OPEN;
  }

  /** Write a frame as is (responses, `external_tool_call_request`). False when the socket is not open. */
  sendPlain(frame: Record<string, unknown>): boolean {
    return this.#write(frame);
  }

  /** Write a runtime event with the envelope; numbers are only used by frames actually written. */
  sendEvent(message: Record<string, unknown>, scope: ScriptedRuntimeScope): boolean {
    if (!this.isOpen) return false;
    const eventSeq = ++this.#eventSeq;
    const type = String(message.type);
    return this.#write({
      ...message,
      runtime: { agent_id: scope.agent_id, conversation_id: scope.conversation_id },
      event_seq: eventSeq,
      emitted_at: new Date(this.#timers.now()).toISOString(),
      idempotency_key: `${type}:${eventSeq}:${randomUUID()}`,
    });
  }

  /** Resolves once every frame written so far has been handed to the OS (or failed). */
  async flushed(): Promise<void> {
    while (this.#pendingWrites.size > 0) await Promise.all([...this.#pendingWrites]);
  }

  /** Close with `code`; 1006 (or any code ws refuses to send) drops the TCP connection without a close frame. */
  close(code: number, reason = ""): void {
    if (this.#socket.readyState !== WebSocket.OPEN && this.#socket.readyState !== WebSocket.CONNECTING) return;
    if (code === 1006) {
      this.terminate();
      return;
    }
    try {
      this.#socket.close(code, reason);
    } catch {
      this.terminate();
    }
  }

  terminate(): void {
    this.#socket.terminate();
  }

  #write(frame: Record<string, unknown>): boolean {
    if (!this.isOpen) return false;
    const text = JSON.stringify(frame);
    this.#onSent({ connectionId: this.id, type: typeof frame.type === "string" ? frame.type : undefined, frame, text });
    const written = new Promise<void>((resolve) => {
      this.#socket.send(text, () => resolve());
    });
    this.#pendingWrites.add(written);
    void written.then(() => this.#pendingWrites.delete(written));
    return true;
  }
}
